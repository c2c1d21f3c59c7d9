"""Clinical building blocks for abductive_conflict stories: which codes a family draws from,
where on the body each service can be done, which diagnoses fit it, and the problems an
office visit can manage at each E/M level.

Nothing here says whether a pair is bundled: the code pairs, their NCCI status and modifier
indicator all come from the reference bundle's PtP table (``generator._derived``). This
module only makes the notes clinically coherent: a diagnosis that fits the code and the
site, an E/M level that fits what the visit managed, measurements inside the code's range.
Every ICD-10-CM code here is checked billable against the bundle when the pools are built.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- sites ---------------------------------------------------------------------------------
# (site name, laceration diagnosis at that site when a repair is coded there)
SKIN_SITES: tuple[tuple[str, str], ...] = (
    ("upper back", "S21.219A"), ("mid back", "S21.219A"), ("left shoulder", "S41.012A"),
    ("right upper arm", "S41.111A"), ("left forearm", "S51.812A"),
    ("right forearm", "S51.811A"), ("right thigh", "S71.111A"),
    ("left lower leg", "S81.812A"), ("right lower leg", "S81.811A"),
)
# a back laceration by the side of the spine its note names (aspect 0 "left of midline",
# 1 "right of midline"): S21.212A left back wall, S21.211A right (review round 7, F3);
# S21.219A (unspecified side) only where no side is written
BACK_LACERATION_BY_ASPECT = ("S21.212A", "S21.211A")
FACE_SITES: tuple[tuple[str, str], ...] = (
    ("forehead", "S01.81XA"), ("left cheek", "S01.412A"), ("right eyebrow", "S01.111A"),
    ("chin", "S01.81XA"),
)
# (site, side, diagnosis)
MAJOR_JOINTS = (("right knee", "RT", "M17.11"), ("left knee", "LT", "M17.12"),
                ("right shoulder", "RT", "M19.011"), ("left shoulder", "LT", "M19.012"))
MID_JOINTS = (("right wrist", "RT", "M19.031"), ("left wrist", "LT", "M19.032"))
# the thumb base is the first carpometacarpal joint: M18.11/M18.12 (unilateral primary
# osteoarthritis of the first CMC joint), not M19.04- (review round 8b, R3)
SMALL_JOINTS = (("right thumb base (CMC joint)", "RT", "M18.11"),
                ("left thumb base (CMC joint)", "LT", "M18.12"))
TENDON_SHEATHS = (("right thumb flexor tendon sheath", "RT", "M65.311"),
                  ("left thumb flexor tendon sheath", "LT", "M65.312"))
TENDON_ORIGINS = (("right lateral epicondyle", "RT", "M77.11"),
                  ("left lateral epicondyle", "LT", "M77.12"))
CARPAL = (("right carpal tunnel", "RT", "G56.01"), ("left carpal tunnel", "LT", "G56.02"))
EARS = (("right ear", "RT", "H61.21"), ("left ear", "LT", "H61.22"))
TOES = (("right great toe", "T5", "L60.0"), ("left great toe", "TA", "L60.0"))
MUSCLES = ("right upper trapezius", "left upper trapezius", "right levator scapulae",
           "left levator scapulae", "right rhomboid", "left infraspinatus")
# 64450 (other peripheral nerve): a median-nerve block at the wrist; an occipital block
# would be 64405. A block on the same limb as the other procedure is never "distinct".
NERVE_SITES = (("right wrist (median nerve)", "RT", "M79.2"),
               ("left wrist (median nerve)", "LT", "M79.2"))
# sites only the two-procedure family uses, in every branch, so that a distinct second
# procedure is as often on the same side as on the other (round 4's red team: different side
# words appeared only in distinct stories): an index-finger joint beside the thumb base
# (20600/20604 cover any small joint of the fingers), a second toe's nail beside the great
# toe's (T6/T1). (A nerve block stays on the other hand when distinct: a block elsewhere
# would be a site, and a diagnosis, that only distinct stories have.)
SMALL_JOINTS_MORE = (("right index finger PIP joint", "RT", "M19.041"),
                     ("left index finger PIP joint", "LT", "M19.042"))
TOES_MORE = (("right second toe", "T6", "L60.0"), ("left second toe", "T1", "L60.0"))

# -- procedure codes of the two-procedure family -------------------------------------------
# code -> (kind, role, lay words, note template). ``kind`` decides which other codes can
# share a site with it (same kind, skin + wound, or a nerve block with anything).


@dataclass(frozen=True)
class Proc:
    kind: str
    role: str
    lay: str
    text: str
    dx: tuple[str, ...] = ()


PROCS: dict[str, Proc] = {
    "11102": Proc("skin", "biopsy", "skin biopsy",
                  "tangential (shave) biopsy of a changing lesion ({size} cm) on the {site}; "
                  "specimen to pathology", ("D49.2", "L98.9")),
    "11104": Proc("skin", "biopsy", "punch biopsy",
                  "4 mm punch biopsy of an irregular pigmented lesion ({size} cm) on the "
                  "{site}; specimen to pathology", ("D49.2",)),
    "17110": Proc("skin", "destroy", "wart treatment",
                  "cryotherapy destruction of {n} common wart(s) on the {site}", ("B07.8",)),
    "17111": Proc("skin", "destroy", "wart treatment",
                  "cryotherapy destruction of {n} common warts on the {site}", ("B07.8",)),
    "17000": Proc("skin", "destroy", "precancer treatment",
                  "cryodestruction of 1 actinic keratosis on the {site}", ("L57.0",)),
    "17004": Proc("skin", "destroy", "precancer treatment",
                  "cryodestruction of {n} actinic keratoses on the {site}", ("L57.0",)),
    "11400": Proc("skin", "excise", "lesion removal",
                  "excision of a benign-appearing lesion, {size} cm with margins, on the {site}",
                  ("D23.9", "L72.3")),
    "11401": Proc("skin", "excise", "lesion removal",
                  "excision of a cyst, {size} cm with margins, on the {site}", ("L72.3", "L72.0")),
    "11402": Proc("skin", "excise", "lesion removal",
                  "excision of a cyst, {size} cm with margins, on the {site}", ("L72.0", "L72.3")),
    "12001": Proc("wound", "repair", "stitches",
                  "simple repair, {size} cm, single-layer closure, on the {site}"),
    "12002": Proc("wound", "repair", "stitches",
                  "simple repair, {size} cm, single-layer closure, on the {site}"),
    "12011": Proc("face", "repair", "stitches on my face",
                  "simple repair, {size} cm, single-layer closure, on the {site}"),
    "12013": Proc("face", "repair", "stitches on my face",
                  "simple repair, {size} cm, single-layer closure, on the {site}"),
    "20610": Proc("major_joint", "inject", "joint injection",
                  "corticosteroid injection of the {site} joint without imaging guidance"),
    "20611": Proc("major_joint", "inject", "ultrasound-guided joint injection",
                  "corticosteroid injection of the {site} joint under ultrasound guidance, "
                  "images recorded"),
    "20605": Proc("mid_joint", "inject", "wrist injection",
                  "corticosteroid injection of the {site} joint without imaging guidance"),
    "20606": Proc("mid_joint", "inject", "ultrasound-guided wrist injection",
                  "corticosteroid injection of the {site} joint under ultrasound guidance, "
                  "images recorded"),
    "20600": Proc("small_joint", "inject", "hand joint injection",
                  "corticosteroid injection of the {site} without imaging guidance"),
    "20604": Proc("small_joint", "inject", "ultrasound-guided hand joint injection",
                  "corticosteroid injection of the {site} under ultrasound guidance, images "
                  "recorded"),
    "20550": Proc("tendon_sheath", "inject", "tendon injection",
                  "corticosteroid injection of the {site}"),
    "20551": Proc("tendon_origin", "inject", "elbow tendon injection",
                  "corticosteroid injection at the tendon origin, {site}"),
    "20526": Proc("carpal", "inject", "carpal tunnel injection",
                  "corticosteroid injection of the {site}"),
    "20552": Proc("muscle", "inject", "trigger point injections",
                  "trigger point injections, {n} muscle(s): {site}", ("M79.18", "M62.838")),
    "20553": Proc("muscle", "inject", "trigger point injections",
                  "trigger point injections, {n} muscles: {site}", ("M79.18", "M62.838")),
    "69209": Proc("ear", "ear", "ear flushing",
                  "removal of impacted cerumen by irrigation, {site}"),
    "69210": Proc("ear", "ear", "earwax removal",
                  "removal of impacted cerumen with a curette under direct visualization, "
                  "{site}"),
    "92567": Proc("ear", "ear_test", "hearing test",
                  "tympanometry, {site}: type B tracing", ("H65.91", "H65.92")),
    "11720": Proc("toe", "nail", "toenail care",
                  "debridement of {n} mycotic toenail(s) including the {site} nail",
                  ("B35.1",)),
    "11721": Proc("toe", "nail", "toenail care",
                  "debridement of {n} mycotic toenails including the {site} nail", ("B35.1",)),
    "11730": Proc("toe", "nail_avulsion", "toenail removal",
                  "avulsion of the nail plate, {site}, for an ingrown nail"),
    "64450": Proc("nerve", "block", "nerve block",
                  "peripheral nerve block with lidocaine 1%, {site}"),
}

# (biopsied lesions are coded D49.2, unspecified behavior, until pathology reports: D48.5,
# uncertain behavior, is a histologic finding)
# the second note of a story whose two lesions could be one (a biopsy, then a destruction or
# an excision): it says "a lesion" in every branch, with no lesion type, so only the two notes'
# sites and distances tell one lesion from two
# a biopsy beside wart destruction biopsies a wart-like lesion, in every story (review round
# 8b, R2: a punch biopsy of "an irregular pigmented lesion" then frozen as a wart)
WART_CODES = frozenset(("17110", "17111"))
WART_BIOPSY_TEXT = {
    "11102": "tangential (shave) biopsy of a verrucous papule ({size} cm) on the {site}; "
             "specimen to pathology",
    "11104": "4 mm punch biopsy of a verrucous papule ({size} cm) on the {site}; specimen to "
             "pathology",
}
LESION_TEXT = {
    "11102": "tangential biopsy of a lesion on the {site}; specimen to pathology",
    "11104": "4 mm punch biopsy of a lesion on the {site}; specimen to pathology",
    "17110": "cryotherapy destruction of a lesion on the {site}",
    "17000": "cryodestruction of a lesion on the {site}",
    "11400": "excision of a lesion, {size} cm with margins, on the {site}",
    "11401": "excision of a lesion, {size} cm with margins, on the {site}",
    "11402": "excision of a lesion, {size} cm with margins, on the {site}",
}

# measured ranges: (low, high) in cm for sizes/lengths, counts otherwise
SIZES = {"11102": (0.4, 1.2), "11104": (0.4, 1.0), "11400": (0.3, 0.5), "11401": (0.6, 1.0),
         "11402": (1.1, 2.0), "12001": (1.0, 2.5), "12002": (2.6, 7.5), "12011": (0.8, 2.5),
         "12013": (2.6, 5.0)}
COUNTS = {"17110": (1, 14), "17111": (15, 20), "17004": (15, 22), "20552": (1, 2),
          "20553": (3, 4), "11720": (1, 5), "11721": (6, 10)}
# same-class pairs whose codes are defined by a total: the parts must add up inside the
# paid (column 1) code's range, so the column 1 code alone is the correct coding
TOTALS = {("12002", "12001"): 7.5, ("12013", "12011"): 5.0, ("11721", "11720"): 10}
# an avulsion covers every service to *that* nail only (CMS article A52998): debriding any
# other nail beside it is a separate structure and payable with XS/59 or a toe modifier, so
# beside an avulsion the debridement is of one nail, whose site alone decides the story
ONE_NAIL = frozenset(("11730",))
# a single-nail debridement read as one nail, not "1 mycotic toenail(s) including ..."
ONE_NAIL_TEXT = "debridement of one mycotic toenail, the {site} nail"

# a simple repair closing a biopsy or excision wound has the length that wound needs: a
# biopsy or a small excision closes within 12001 (<= 2.5 cm), a 1.1-2.0 cm excision within
# 12002; other lesion/repair pairs are left out (no same-site story would be plausible).
# A shave biopsy's round wound heals open and is never sutured, so its pair with a repair
# is dropped after the split draw (``SUTURED_NEVER``; review round 8b, S1)
SUTURED_NEVER = frozenset(("11102",))
REPAIR_FITS = {"12001": frozenset(("11102", "11104", "11400", "11401")),
               "12002": frozenset(("11402",))}

# kinds that may share one site; a nerve block may be the anesthetic for any procedure
SAME_SITE_KINDS = {frozenset(("skin",)), frozenset(("skin", "wound")), frozenset(("wound",)),
                   frozenset(("face",)), frozenset(("major_joint",)), frozenset(("mid_joint",)),
                   frozenset(("small_joint",)), frozenset(("tendon_sheath",)),
                   frozenset(("tendon_origin",)), frozenset(("carpal",)),
                   frozenset(("muscle",)), frozenset(("ear",)), frozenset(("toe",))}
# roles that can be done to one lesion the same day (a biopsy before destroying or removing
# the lesion, a repair closing the biopsy or excision wound)
SAME_LESION_ROLES = {frozenset(("biopsy", "destroy")), frozenset(("biopsy", "excise")),
                     frozenset(("biopsy", "repair")), frozenset(("excise", "repair")),
                     frozenset(("ear",)), frozenset(("ear", "ear_test")),
                     frozenset(("nail", "nail_avulsion")), frozenset(("inject",)),
                     frozenset(("destroy",)), frozenset(("repair",)), frozenset(("nail",))}

# -- the E/M family ------------------------------------------------------------------------
EM_LEVELS = ("99212", "99213", "99214", "99215")
EM_TEXT = {"99211": "nurse visit (physician not required)",
           "99212": "established-patient office visit, straightforward medical decision making",
           "99213": "established-patient office visit, low medical decision making",
           "99214": "established-patient office visit, moderate medical decision making",
           "99215": "established-patient office visit, high medical decision making"}


# aftercare of a service, written into half of the visit notes of every branch (part of the
# service, never a separate problem): what a clinician would tell after that service
INJECTION_CARE = ("follow-up arranged in {weeks} weeks to review the response to the {lay}",
                  "ice and acetaminophen as needed for soreness after the {lay}; return "
                  "precautions given",
                  "aftercare for the {lay} explained and a recheck arranged in {weeks} weeks")
BIOPSY_CARE = ("wound care explained; the pathology result to be reviewed in {weeks} weeks",
               "petrolatum and a bandage daily until healed; the pathology result to be "
               "reviewed in {weeks} weeks")
CRYO_CARE = ("blister care after the {lay} explained; recheck in {weeks} weeks",
             "acetaminophen as needed for soreness after the {lay}; recheck in {weeks} weeks")
EAR_CARE = ("advised against cotton swabs; return if the blocked feeling comes back",
            "home drops to soften wax explained for the future; recheck as needed")
NAIL_CARE = ("soaks and dressing care after the {lay} explained; recheck in 2 weeks",
             "acetaminophen as needed for soreness after the {lay}; call if signs of infection")


@dataclass(frozen=True)
class Service:
    """A same-day service billed with an office visit: lay words, what was done, the
    problem it treats (diagnosis, why the patient came for it), and a site when it has one.

    ``routine``: a non-surgical (XXX global) service the patient came in for as scheduled
    (a drug administration, a vaccine, an ordered test). For these the decision to give the
    service is not part of the service (CPT drug-administration guidelines, NCCI Ch. XI): a
    real evaluation of a new problem before it would itself be a separately identifiable
    E/M. So their visits are never told as an evaluation leading to the service; the
    patient comes for the scheduled service with no new complaints about it, and only the
    visit's other problem can make the E/M distinct. Minor surgical procedures (000/010
    global) keep the pre-procedure evaluation, which their global package includes
    (Pub. 100-04 Ch. 12 40.1.C)."""

    lay: str
    text: str
    dx: str
    reason: str
    sites: tuple[tuple[str, str, str], ...] = ()
    aftercare: tuple[str, ...] = INJECTION_CARE
    routine: bool = False


_SKIN = tuple((s, "", "") for s, _ in SKIN_SITES)
# a skin abscess coded at the site and side its note names (ICD-10-CM L02.2-/L02.4-: the
# back L02.212; the upper limb, shoulder region included, L02.413 right / L02.414 left; the
# lower limb, thigh included, L02.415 right / L02.416 left), never L02.91 (unspecified)
# when the note names both (domain review round 9: 7002, 7040)
ABSCESS_DX = {"upper back": "L02.212", "mid back": "L02.212", "left shoulder": "L02.414",
              "right upper arm": "L02.413", "left forearm": "L02.414",
              "right forearm": "L02.413", "right thigh": "L02.415",
              "left lower leg": "L02.416", "right lower leg": "L02.415"}
ABSCESS_SITES = tuple((s, "", ABSCESS_DX[s]) for s, _ in SKIN_SITES)
SERVICES: dict[str, Service] = {
    "20610": Service("knee injection", "corticosteroid injection of the {site} joint", "",
                     "worsening osteoarthritis pain of the {site} despite oral analgesics",
                     MAJOR_JOINTS),
    "20605": Service("wrist injection", "corticosteroid injection of the {site} joint", "",
                     "arthritic pain of the {site} limiting grip", MID_JOINTS),
    "20600": Service("thumb joint injection", "corticosteroid injection of the {site}", "",
                     "pain at the {site} when pinching", SMALL_JOINTS),
    "20550": Service("tendon injection", "corticosteroid injection of the {site}", "",
                     "catching and locking of the thumb ({site})", TENDON_SHEATHS),
    "20551": Service("elbow injection", "corticosteroid injection at the {site}", "",
                     "lateral elbow pain with gripping ({site})", TENDON_ORIGINS),
    "20526": Service("carpal tunnel injection", "corticosteroid injection of the {site}", "",
                     "night-time numbness of the hand ({site})", CARPAL),
    "69210": Service("earwax removal", "removal of impacted cerumen with a curette, {site}", "",
                     "muffled hearing from wax in the {site}", EARS, EAR_CARE),
    "69209": Service("ear flushing", "removal of impacted cerumen by irrigation, {site}", "",
                     "blocked feeling from wax in the {site}", EARS, EAR_CARE),
    "11730": Service("toenail removal", "avulsion of the nail plate, {site}", "",
                     "painful ingrown nail of the {site}", TOES, NAIL_CARE),
    "11102": Service("skin biopsy", "tangential biopsy of a lesion on the {site}", "D49.2",
                     "a changing mole on the {site}", _SKIN, BIOPSY_CARE),
    "11104": Service("punch biopsy", "punch biopsy of a lesion on the {site}", "D49.2",
                     "an irregular pigmented lesion on the {site}", _SKIN, BIOPSY_CARE),
    "17110": Service("wart treatment", "cryotherapy of common warts on the {site}", "B07.8",
                     "warts spreading on the {site}", _SKIN, CRYO_CARE),
    "17000": Service("precancer treatment", "cryodestruction of an actinic keratosis on the "
                     "{site}", "L57.0", "a rough scaly spot on the {site}", _SKIN, CRYO_CARE),
    "10060": Service("abscess drainage", "incision and drainage of an abscess on the {site}",
                     "", "a painful swollen boil on the {site}", ABSCESS_SITES,
                     ("packing and dressing care explained; wound recheck in 2 days",
                      "warm compresses and acetaminophen as needed after the {lay}; wound "
                      "recheck in 2 days")),
    "11720": Service("toenail care", "debridement of 4 thickened mycotic toenails", "B35.1",
                     "thick painful toenails", (),
                     ("next routine debridement due in about 10 weeks",)),
    "30901": Service("nosebleed treatment", "anterior nasal packing for epistaxis", "R04.0",
                     "a nosebleed that would not stop", (),
                     ("packing to stay in for 48 hours, no nose blowing and no aspirin or "
                      "ibuprofen; recheck for removal in 2 days",)),
    # routine services: the visit's reason is the scheduled service itself
    # a series starts at the first dose after the visit that ordered it (the account history
    # lists that visit, 2-5 business days back, and no earlier dose; review round 7, F8)
    "96372": Service("B12 injection", "cyanocobalamin 1,000 mcg IM injection, the first dose",
                     "D51.9", "the first B12 injection, ordered at the previous visit for B12 "
                     "deficiency anemia", (),
                     ("the next injection scheduled in 1 week (weekly for 4 weeks, then "
                      "monthly)",), True),
    "96374": Service("IV iron", "iron sucrose 200 mg IV push over 5 minutes, dose 1 of 5",
                     "D50.9", "the first dose of the IV iron series ordered at the previous "
                     "visit for iron deficiency anemia", (),
                     ("observed 30 minutes after the dose without a reaction; the next dose of "
                      "the series is scheduled in 1 week",), True),
    # (a scheduled indication: weekly saline for POTS; dehydration with poor oral intake is
    # not left 2-5 business days for its fluids; review round 8b, S3)
    "96360": Service("IV fluids", "IV hydration with 1 liter of normal saline, 45 minutes",
                     "G90.A", "the first of the weekly IV saline infusions ordered at the "
                     "previous visit for postural orthostatic tachycardia syndrome (POTS)", (),
                     ("tolerated the fluids; the next weekly infusion is scheduled in 1 week",),
                     True),
    "96365": Service("IV infusion", "IV ceftriaxone 1 g infusion, 35 minutes, a single dose",
                     "N39.0", "the single IV antibiotic dose ordered at the previous visit for "
                     "a urinary infection once the urine culture showed resistance to the "
                     "first oral antibiotic", (),
                     ("tolerated the infusion; the culture-directed oral antibiotic starts "
                      "tomorrow as prescribed",), True),
    "90471": Service("flu shot", "influenza vaccine administration, IM", "Z23",
                     "the seasonal flu vaccine", (),
                     ("observed 15 minutes after the vaccine without a reaction",), True),
    "94640": Service("breathing treatment", "nebulized albuterol treatment", "J45.909",
                     "the scheduled nebulizer treatment ordered at the previous visit for "
                     "asthma", (),
                     ("tolerated the treatment; home inhaler schedule unchanged",), True),
    "94010": Service("breathing test", "spirometry with interpretation", "J45.909",
                     "the spirometry ordered at the previous visit for wheezing", (),
                     ("the report goes to the follow-up visit already booked",), True),
    "94060": Service("breathing test", "spirometry before and after bronchodilator", "J45.909",
                     "the spirometry ordered at the previous visit for wheezing", (),
                     ("the report goes to the follow-up visit already booked",), True),
    "93000": Service("EKG", "12-lead electrocardiogram with interpretation and report",
                     "R00.2", "the EKG ordered at the previous visit for palpitations", (),
                     ("the tracing goes to the follow-up visit already booked",), True),
    "96127": Service("mood questionnaire", "standardized PHQ-9 instrument administered and "
                     "scored", "F32.A", "the scheduled repeat depression questionnaire", (),
                     ("the score goes to the follow-up visit already booked",), True),
    "99406": Service("stop-smoking counseling", "tobacco cessation counseling, 8 minutes",
                     "F17.210", "the scheduled stop-smoking counseling session", (),
                     ("next counseling session scheduled in 2 weeks",), True),
    "99407": Service("stop-smoking counseling", "tobacco cessation counseling, 14 minutes",
                     "F17.210", "the scheduled stop-smoking counseling session", (),
                     ("next counseling session scheduled in 2 weeks",), True),
    "95851": Service("range-of-motion test", "range-of-motion measurements with a goniometer "
                     "and written report, {site}", "", "the scheduled range-of-motion "
                     "measurement of the {site}", MAJOR_JOINTS,
                     ("measurements filed with the written report",), True),
}


@dataclass(frozen=True)
class Problem:
    """What a separately identifiable visit managed, at the level its complexity supports."""

    dx: str
    level: str
    text: str


PROBLEMS: tuple[Problem, ...] = (
    Problem("I10", "99211", "blood pressure recheck by the nurse, 136/84; home log reviewed "
            "and forwarded to the physician"),
    Problem("J06.9", "99212", "three days of sore throat, congestion and cough without fever; "
            "viral upper respiratory infection; supportive care and return precautions"),
    Problem("L25.9", "99212", "an itchy rash on both forearms for a week; contact dermatitis; "
            "hydrocortisone cream and avoidance of the new detergent"),
    Problem("J01.90", "99213", "ten days of facial pressure and purulent nasal discharge; acute "
            "sinusitis; amoxicillin-clavulanate prescribed"),
    Problem("K21.9", "99213", "six weeks of heartburn after meals; reflux disease; omeprazole "
            "started with diet advice"),
    Problem("N39.0", "99213", "two days of burning urination and frequency; uncomplicated "
            "cystitis; nitrofurantoin prescribed"),
    Problem("J20.9", "99213", "a week of productive cough after a cold, lungs clear; acute "
            "bronchitis; supportive care, benzonatate prescribed"),
    Problem("I10", "99214", "blood pressure 158/96 and 162/98 on repeat readings, home log "
            "averaging 150/95; hypertension diagnosed; amlodipine 5 mg started, metabolic "
            "panel ordered, recheck in 4 weeks"),
    Problem("E11.65", "99214", "type 2 diabetes with A1c 9.2%; metformin increased and "
            "glipizide added, foot exam done, eye exam referral"),
    Problem("E78.5", "99214", "LDL 172 on the screening panel; atorvastatin 20 mg started, "
            "liver tests and lipids to be repeated in 6 weeks"),
    Problem("F41.1", "99214", "worsening anxiety with poor sleep; sertraline increased to "
            "100 mg, counseling referral, follow-up in 4 weeks"),
    # problems managed in the words clinicians use beyond "prescribed" or "started" (a
    # prescription renewed, continued, titrated, switched): drug management all the same
    Problem("I10", "99213", "blood pressure 142/88 with home readings alike; hypertension "
            "stable; lisinopril 10 mg renewed for 90 days and sodium intake reviewed"),
    Problem("M54.50", "99213", "two weeks of low back pain after lifting, no red flags; "
            "naproxen 500 mg twice daily for 10 days with a home stretching program"),
    Problem("E11.65", "99214", "type 2 diabetes with hyperglycemia, A1c 8.1% up from 7.2%; "
            "metformin titrated to 1,000 mg twice daily, home glucose log reviewed, foot "
            "exam normal"),
    Problem("I10", "99214", "hypertension above goal at 154/96 on two readings; lisinopril "
            "adjusted from 10 to 20 mg, potassium and creatinine to be checked in two weeks"),
    Problem("G43.909", "99214", "migraines now weekly despite sumatriptan; switched to "
            "rizatriptan with topiramate titration begun, headache diary reviewed"),
    Problem("I50.9", "99215", "heart failure with a 3 kg weight gain, orthopnea and leg edema; "
            "severe exacerbation; admission discussed and declined by the patient, "
            "furosemide doubled with next-day weight and electrolyte checks"),
    Problem("I48.91", "99215", "irregular pulse of 118; atrial fibrillation with rapid "
            "response found; metoprolol started, anticoagulation chosen after a bleeding-risk "
            "discussion, same-week cardiology referral"),
    Problem("R07.9", "99215", "two weeks of exertional chest pressure; high-risk features "
            "reviewed, aspirin and sublingual nitroglycerin prescribed, urgent stress testing "
            "arranged"),
)
# conditions listed in the history and not managed at the visit
HISTORY: tuple[tuple[str, str], ...] = (
    ("E03.9", "hypothyroidism on levothyroxine, followed by endocrinology"),
    ("J30.9", "seasonal allergic rhinitis, controlled"),
    ("E55.9", "vitamin D deficiency on supplements"),
    ("E66.9", "obesity"),
)

# -- the therapy family --------------------------------------------------------------------
THERAPY: dict[str, tuple[str, str, int]] = {  # code -> (lay, note text, minutes)
    "97110": ("therapeutic exercise", "therapeutic exercise (core and hip strengthening)", 15),
    "97112": ("balance training", "neuromuscular re-education (balance and proprioception)",
              15),
    "97116": ("gait training", "gait training on level surfaces and stairs", 15),
    "97140": ("manual therapy", "manual therapy (joint mobilization and soft-tissue work)", 15),
    "97530": ("therapeutic activities", "therapeutic activities (lifting and transfer "
              "mechanics)", 15),
    "97535": ("home exercise training", "self-care training (home program and activity "
              "modification)", 15),
    "97032": ("electrical stimulation", "attended electrical stimulation", 15),
    "97035": ("ultrasound therapy", "therapeutic ultrasound", 10),
    "97124": ("massage", "massage (effleurage and petrissage)", 15),
    "97012": ("traction", "mechanical traction", 15),
    "97018": ("paraffin bath", "paraffin bath", 15),
    "97022": ("whirlpool", "whirlpool", 15),
    "97750": ("performance test", "physical performance test with written report", 15),
    "95851": ("range-of-motion test", "range-of-motion measurements with written report", 10),
    "97161": ("therapy evaluation", "physical therapy evaluation, low complexity", 20),
    "97162": ("therapy evaluation", "physical therapy evaluation, moderate complexity", 30),
    "97163": ("therapy evaluation", "physical therapy evaluation, high complexity", 45),
    "97164": ("therapy re-evaluation", "physical therapy re-evaluation", 20),
}
THERAPY_DX = ("M54.50", "M25.561", "M62.81", "R26.89", "M75.41", "M54.2", "M25.552",
              "M25.571", "M25.531", "M25.532")
# Untimed services whose NCCI edits with other therapy codes are bypassed only for another
# body region, never for another clock interval: range-of-motion measurements (95851, a CPT
# "separate procedure", each extremity or trunk section) and supervised modalities (traction,
# paraffin, whirlpool). Timed procedures (15-minute units) are distinct in separate intervals
# (CMS's 97530/97140 example); these are distinct only at another site.
SITE_DECIDED: dict[str, tuple[str, ...]] = {
    "95851": ("right knee", "left shoulder", "left hip", "right ankle", "lumbar spine",
              "cervical spine"),
    "97012": ("lumbar spine", "cervical spine"),
    "97018": ("right hand and wrist", "left hand and wrist"),
    "97022": ("right hand and wrist", "left hand and wrist", "right ankle", "right knee"),
}
# an evaluation and a treatment are distinct when the treatment had its own interval after
# the evaluation (the clock decides, as for timed codes); two evaluations never share a day
EVALUATIONS = frozenset(("97161", "97162", "97163", "97164"))
# indicator-1 edits kept out of the task: no same-region story exists (traction of the
# spine and paraffin of a hand), so the denial could never stand on the notes
CONTESTED_THERAPY = frozenset((frozenset(("97012", "97018")),))
THERAPY_REGIONS = ("lumbar spine", "right knee", "left shoulder", "cervical spine", "left hip",
                   "right ankle")

ALL_DX = tuple(sorted({*(d for p in PROCS.values() for d in p.dx),
                       *(s[1] for s in SKIN_SITES), *(s[1] for s in FACE_SITES),
                       *BACK_LACERATION_BY_ASPECT,
                       *(s[2] for group in (MAJOR_JOINTS, MID_JOINTS, SMALL_JOINTS,
                                            TENDON_SHEATHS, TENDON_ORIGINS, CARPAL, EARS, TOES,
                                            NERVE_SITES, SMALL_JOINTS_MORE,
                                            TOES_MORE, ABSCESS_SITES) for s in group),
                       *(s.dx for s in SERVICES.values() if s.dx),
                       *(p.dx for p in PROBLEMS), *(h[0] for h in HISTORY), *THERAPY_DX}))
