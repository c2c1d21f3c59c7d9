"""The coder's tools: search_icd10 / search_cpt find the code a coder would pick, get_icd10
shows the notes a coder must read.

The query sets are written the way a coder types (abbreviations, lay terms, sides and
encounters in shorthand), not copied from code titles; each lists the code(s) a certified coder
would accept for it.  Acceptance (issue 9): the target is in the top 5 for at least 90% of each
set.  Latency is measured in ``benchmarks/search.py``, never asserted here.
"""

from __future__ import annotations

import pytest

from clarus_env import open_reference
from clarus_env.tasks.medical_coding.search import (
    expand_cpt_text,
    expand_icd_query,
    get_icd10,
    search_cpt,
    search_icd10,
    stated_quantities,
)

ICD_QUERIES: list[tuple[str, set[str]]] = [
    ("strep throat", {"J02.0"}),
    ("uti", {"N39.0"}),
    ("pneumonia", {"J18.9"}),
    ("acute otitis media right ear", {"H66.91"}),
    ("aom left", {"H66.92"}),
    ("pink eye right", {"H10.31", "H10.021"}),
    ("htn", {"I10"}),
    ("afib", {"I48.91"}),
    ("copd", {"J44.9"}),
    ("copd exacerbation", {"J44.1"}),
    ("gerd", {"K21.9"}),
    ("sob", {"R06.02"}),
    ("chest pain", {"R07.9"}),
    ("ha", {"R51.9"}),
    ("n/v", {"R11.2"}),
    ("dizzy", {"R42"}),
    ("t2dm", {"E11.9"}),
    ("dm2 with hyperglycemia", {"E11.65"}),
    ("type 2 diabetes with ckd", {"E11.22"}),
    ("hypothyroid", {"E03.9"}),
    ("high cholesterol", {"E78.00", "E78.5"}),
    ("hld", {"E78.5"}),
    ("cad", {"I25.10"}),
    ("chf", {"I50.9"}),
    ("ckd stage 3b", {"N18.32"}),
    ("bph with luts", {"N40.1"}),
    ("osa", {"G47.33"}),
    ("ibs", {"K58.9"}),
    ("adhd combined type", {"F90.2"}),
    ("gad", {"F41.1"}),
    ("mdd recurrent moderate", {"F33.1"}),
    ("lbp", {"M54.50"}),
    ("sciatica left", {"M54.32"}),
    ("r knee oa", {"M17.11"}),
    ("tennis elbow right", {"M77.11"}),
    ("trigger finger left index", {"M65.322"}),
    ("carpal tunnel bilat", {"G56.03"}),
    ("plantar fasciitis", {"M72.2"}),
    ("kidney stone", {"N20.0"}),
    ("shingles", {"B02.9"}),
    ("cold sore", {"B00.1"}),
    ("athletes foot", {"B35.3"}),
    ("ringworm", {"B35.4"}),
    ("hives", {"L50.9"}),
    ("impetigo", {"L01.00"}),
    ("eczema", {"L30.9"}),
    ("ingrown toenail", {"L60.0"}),
    ("ear wax impaction right", {"H61.21"}),
    ("swimmers ear left", {"H60.332"}),
    ("bppv right", {"H81.11"}),
    ("bells palsy", {"G51.0"}),
    ("migraine", {"G43.909"}),
    ("ankle sprain right initial", {"S93.401A"}),
    ("l wrist sprain f/u", {"S63.502D"}),
    ("buckle fx distal radius right", {"S52.521A"}),
    ("concussion no loc", {"S06.0X0A"}),
    ("dog bite left hand", {"S61.452A"}),
    ("fell off ladder", {"W11.XXXA"}),
    ("bitten by dog", {"W54.0XXA"}),
    ("tylenol overdose accidental", {"T39.1X1A"}),
    ("adverse effect of coumadin", {"T45.515A"}),
    ("lung cancer", {"C34.90"}),
    ("breast cancer right", {"C50.911"}),
    ("mets to liver", {"C78.7"}),
    ("hx breast cancer", {"Z85.3"}),
    ("h/o dvt", {"Z86.718"}),
    ("former smoker", {"Z87.891"}),
    ("long term insulin use", {"Z79.4"}),
    ("annual physical", {"Z00.00"}),
    ("well child check", {"Z00.129"}),
    ("flu shot", {"Z23"}),
    ("iud insertion", {"Z30.430"}),
    ("covid", {"U07.1"}),
    ("flu", {"J11.1"}),
    ("bronchitis", {"J40"}),
    ("uri", {"J06.9"}),
    ("common cold", {"J00"}),
    ("sore throat", {"J02.9", "R07.0"}),
    ("fever", {"R50.9"}),
    ("cough", {"R05.9"}),
    ("vit d deficiency", {"E55.9"}),
    ("iron deficiency anemia", {"D50.9"}),
    ("prediabetes", {"R73.03"}),
    ("current smoker cigarettes", {"F17.210"}),
    ("alcohol abuse", {"F10.10"}),
    ("menopause hot flashes", {"N95.1"}),
    ("heavy periods", {"N92.0"}),
    ("hemorrhoids", {"K64.9"}),
    ("dvt left leg", {"I82.402"}),
]

CPT_QUERIES: list[tuple[str, set[str]]] = [
    ("knee injection", {"20610"}),
    ("shoulder joint injection", {"20610"}),
    ("finger joint injection", {"20600"}),
    ("wrist injection", {"20605"}),
    ("knee injection with ultrasound", {"20611"}),
    ("trigger finger injection", {"20550"}),
    ("tendon sheath njx", {"20550"}),
    ("ear wax removal irrigation", {"69209"}),
    ("cerumen removal with curette", {"69210"}),
    ("ear lavage", {"69209"}),
    ("cryo warts", {"17110"}),
    ("destruction of 3 warts", {"17110"}),
    ("ak destruction", {"17000"}),
    ("liquid nitrogen 1 actinic keratosis", {"17000"}),
    ("shave bx", {"11102"}),
    ("punch biopsy skin", {"11104"}),
    ("skin tag removal", {"11200"}),
    ("ingrown toenail removal", {"11730"}),
    ("i&d abscess", {"10060"}),
    ("rpr 2 cm lac arm", {"12001"}),
    ("simple repair 5 cm laceration leg", {"12002"}),
    ("face lac repair 2 cm", {"12011"}),
    ("forehead laceration repair 4 cm", {"12013"}),
    ("short arm splint", {"29125"}),
    ("short leg splint", {"29515"}),
    ("ankle strapping", {"29540"}),
    ("neb treatment", {"94640"}),
    ("albuterol nebulizer", {"94640"}),
    ("spirometry", {"94010"}),
    ("b12 shot im", {"96372"}),
    ("im injection", {"96372"}),
    ("vaccine admin", {"90471"}),
    ("flu vaccine administration medicare", {"G0008"}),
    ("iiv3 pf", {"90656"}),
    ("flu shot preservative free trivalent", {"90656"}),
    ("iud insertion", {"58300"}),
    ("rapid strep", {"87880"}),
    ("urine dip", {"81002"}),
    ("rapid flu test", {"87804"}),
    ("ekg", {"93000"}),
    ("fingerstick glucose", {"82962"}),
    ("phq-9", {"96127"}),
    ("venipuncture", {"36415"}),
    ("smoking cessation counseling 5 min", {"99406"}),
    ("est pt office visit moderate mdm", {"99214"}),
    ("new patient visit low mdm", {"99203"}),
    ("office visit est 20 min", {"99213"}),
    ("well visit 45 yo est", {"99396"}),
    ("new pt physical age 30", {"99385"}),
    ("well child 3 year old established", {"99392"}),
    ("annual wellness visit subsequent", {"G0439"}),
    ("nurse visit", {"99211"}),
    ("triamcinolone injection 10 mg", {"J3301"}),
]


@pytest.fixture(scope="module")
def ref():  # noqa: ANN201
    return open_reference()


def _misses(ref, queries, search):  # noqa: ANN001, ANN202
    out = []
    for query, want in queries:
        got = [h["code"] for h in search(ref, query, 5)]
        if not want & set(got):
            out.append(f"{query!r}: want {sorted(want)}, top 5 {got}")
    return out


def test_query_sets_are_large_and_unique() -> None:
    for queries in (ICD_QUERIES, CPT_QUERIES):
        assert len(queries) >= 40
        assert len({q for q, _ in queries}) == len(queries)


def test_codes_in_the_query_sets_exist(ref) -> None:  # noqa: ANN001
    for _, want in ICD_QUERIES + ICD_LATER:
        for code in want:
            assert ref.icd10cm(code)["billable"], code
    for _, want in CPT_QUERIES + CPT_LATER:
        for code in want:
            assert ref.rvu(code) is not None or ref.hcpcs_level2(code) is not None, code


def test_search_icd10_top5_hit_rate(ref) -> None:  # noqa: ANN001
    misses = _misses(ref, ICD_QUERIES, search_icd10)
    hit = 1 - len(misses) / len(ICD_QUERIES)
    assert hit >= 0.90, f"top-5 hit {hit:.1%}; misses:\n" + "\n".join(misses)


def test_search_cpt_top5_hit_rate(ref) -> None:  # noqa: ANN001
    misses = _misses(ref, CPT_QUERIES, search_cpt)
    hit = 1 - len(misses) / len(CPT_QUERIES)
    assert hit >= 0.90, f"top-5 hit {hit:.1%}; misses:\n" + "\n".join(misses)


# --- behaviour a coder relies on ------------------------------------------------------------------

def test_lay_terms_expand_to_code_set_words() -> None:
    assert "urinary tract infection" in expand_icd_query("UTI")
    assert "atrial fibrillation" in expand_icd_query("h/o afib")
    assert "history" in expand_icd_query("h/o afib")
    assert "leg|lower limb|lower extremity" in expand_icd_query("cellulitis left leg")
    assert expand_icd_query("urticaria") == "urticaria"  # words of the code set stay as typed
    assert "injection" in expand_cpt_text("njx tendon sheath")
    assert "repair" in expand_cpt_text("Rpr 2 cm lac")
    assert "benign" in expand_cpt_text("destruction b9 les")
    assert "intrauterine device" in expand_cpt_text("IUD insertion")
    assert "incision drainage" in expand_cpt_text("I&D abscess")


def test_stated_quantities() -> None:
    assert stated_quantities("rpr 2.5 cm lac arm") == {"cm": 2.5}
    assert stated_quantities("well visit 45 yo") == {"age": 45.0}
    assert stated_quantities("physical for a 7-year-old") == {"age": 7.0}
    assert stated_quantities("cryo of 3 warts") == {"count": 3.0}
    assert stated_quantities("office visit") == {}


def test_seventh_character_follows_the_query(ref) -> None:  # noqa: ANN001
    def top(q: str) -> str:
        return search_icd10(ref, q, 1)[0]["code"]

    assert top("sprain right ankle") == "S93.401A"  # initial encounter when nothing is said
    assert top("sprain right ankle subsequent encounter") == "S93.401D"
    assert top("sprain right ankle sequela") == "S93.401S"
    assert top("torus fracture right distal radius routine healing") == "S52.521D"
    # every result is a billable code, even when the node needs a 7th character
    for h in search_icd10(ref, "fracture of left clavicle", 10):
        assert ref.icd10cm(h["code"])["billable"], h


def test_laterality_and_specificity_follow_the_query(ref) -> None:  # noqa: ANN001
    assert search_icd10(ref, "otitis media", 1)[0]["code"] == "H66.90"
    assert search_icd10(ref, "otitis media left ear", 1)[0]["code"] == "H66.92"
    assert search_icd10(ref, "bilateral otitis media", 1)[0]["code"] == "H66.93"
    assert search_icd10(ref, "copd", 1)[0]["code"] == "J44.9"
    assert search_icd10(ref, "copd with acute exacerbation", 1)[0]["code"] == "J44.1"


def test_index_tables_are_searched(ref) -> None:  # noqa: ANN001
    alligator = search_icd10(ref, "bitten by alligator", 3)
    assert alligator[0]["code"] == "W58.01XA" and "alligator" in alligator[0]["matched"]
    assert search_icd10(ref, "acetaminophen poisoning accidental", 1)[0]["code"] == "T39.1X1A"
    assert search_icd10(ref, "underdosing of warfarin", 1)[0]["code"] == "T45.516A"
    neo = search_icd10(ref, "benign neoplasm of colon", 3)
    assert "D12.6" in [h["code"] for h in neo]


def test_cpt_codes_with_colliding_short_descriptors_are_told_apart(ref) -> None:  # noqa: ANN001
    for query, code in (("finger joint injection", "20600"), ("ankle joint injection", "20605"),
                        ("knee joint injection", "20610"),
                        ("ear wax removal by irrigation", "69209"),
                        ("ear wax removal with curette", "69210")):
        hits = search_cpt(ref, query, 3)
        assert hits[0]["code"] == code, (query, hits)
    short = {ref.rvu(c)["description"] for c in ("20600", "20605", "20610")}
    assert len(short) == 1  # CMS's own descriptors cannot tell them apart


def test_search_results_shape_and_determinism(ref) -> None:  # noqa: ANN001
    a = search_icd10(ref, "strep throat", 10)
    assert a == search_icd10(ref, "strep throat", 10)
    assert len(a) == 10 and len({h["code"] for h in a}) == 10
    assert set(a[0]) == {"code", "description", "billable", "score", "matched"}
    assert a[0]["code"] == "J02.0"
    assert a[0]["matched"] in ("Streptococcal sore throat", "Streptococcal pharyngitis")
    c = search_cpt(ref, "ekg", 5)
    assert set(c[0]) == {"code", "description", "status", "score", "matched"}
    assert search_icd10(ref, "", 5) == [] and search_cpt(ref, "  ", 5) == []
    assert search_icd10(ref, "zzqx", 5) == []


def test_get_icd10_returns_the_notes_a_coder_must_read(ref) -> None:  # noqa: ANN001
    j = get_icd10(ref, "J02.0")
    assert j["inclusion_terms"] == ["Septic pharyngitis", "Streptococcal sore throat"]
    assert j["excludes2"] == "scarlet fever (A38.-)"
    e = get_icd10(ref, "E11.22")
    assert e["use_additional_code"][0].startswith("code to identify stage of chronic kidney")
    n = get_icd10(ref, "N18.31")
    assert any("E11.22" in line for line in n["inherited"]["N18"]["code_first"])
    s = get_icd10(ref, "s52.521a")  # any case, with or without the dot
    # torus fractures define their own, shorter 7th-character list: the nearest one applies
    assert s["code"] == "S52.521A" and s["seventh_character_from"] == "S52.52"
    assert s["seventh_characters"]["A"] == "initial encounter for closed fracture"
    assert "B" not in s["seventh_characters"]
    assert "B" in get_icd10(ref, "S52.501A")["seventh_characters"]
    assert "coded to closed" in " ".join(s["inherited"]["S52"]["notes"])
    assert get_icd10(ref, "I10")["seventh_characters"] == {}
    assert get_icd10(ref, "ZZZ.9") is None


def test_remembered_answers_are_copies(ref) -> None:  # noqa: ANN001
    first = search_icd10(ref, "htn", 3)
    first[0]["code"] = "XXX"
    first.append({"code": "junk"})
    again = search_icd10(ref, "htn", 3)
    assert again[0]["code"] == "I10" and len(again) == 3
    c = search_cpt(ref, "ekg", 2)
    c[0]["status"] = "?"
    assert search_cpt(ref, "ekg", 2)[0]["status"] == "A"


def test_same_answers_in_any_process() -> None:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = ("import json\nfrom clarus_env import open_reference\n"
              "from clarus_env.tasks.medical_coding.search import search_cpt, search_icd10\n"
              "ref = open_reference()\n"
              "print(json.dumps([search_icd10(ref, q, 10) for q in ('strep throat', 'dvt left leg',"
              " 'fracture left clavicle f/u')] + [search_cpt(ref, q, 10) for q in"
              " ('knee injection', 'rpr 2 cm lac arm')]))\n")
    repo = Path(__file__).resolve().parents[1]
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             cwd=repo, env=env, timeout=300)
        assert run.returncode == 0, run.stderr
        outs.append(run.stdout)
    assert outs[0] == outs[1] and json.loads(outs[0])[0][0]["code"] == "J02.0"


# Written after the sets above were tuned, in three rounds, each run once before any change
# (first-run top-5: ICD-10-CM 86%, 87%, 93%; CPT 87%, 100%, 90%); kept as regression sets.
ICD_LATER: list[tuple[str, set[str]]] = [
    ('acute sinusitis', {'J01.90'}),
    ('maxillary sinusitis acute', {'J01.00'}),
    ('allergic rhinitis seasonal', {'J30.2'}),
    ('asthma mild intermittent', {'J45.20'}),
    ('asthma exacerbation moderate persistent', {'J45.41'}),
    ('cellulitis right lower leg', {'L03.115'}),
    ('abscess left armpit', {'L02.412'}),
    ('rash', {'R21'}),
    ('fatigue', {'R53.83'}),
    ('palpitations', {'R00.2'}),
    ('epigastric pain', {'R10.13'}),
    ('rlq pain', {'R10.31'}),
    ('hematuria', {'R31.9'}),
    ('constipated', {'K59.00'}),
    ('viral gastroenteritis', {'A08.4'}),
    ('hypertension with ckd stage 4', {'I12.9', 'N18.4'}),
    ('chronic systolic chf', {'I50.22'}),
    ('paroxysmal afib', {'I48.0'}),
    ('type 1 diabetes', {'E10.9'}),
    ('diabetic neuropathy type 2', {'E11.40', 'E11.42'}),
    ('insomnia', {'G47.00'}),
    ('tension headache', {'G44.209'}),
    ('neck pain', {'M54.2'}),
    ('frozen shoulder left', {'M75.02'}),
    ('de quervains', {'M65.4'}),
    ('osteoporosis', {'M81.0'}),
    ('fibromyalgia', {'M79.7'}),
    ('rheumatoid arthritis', {'M06.9'}),
    ('left knee contusion initial', {'S80.02XA'}),
    ('corneal abrasion right eye', {'S05.01XA'}),
    ('lumbar strain', {'S39.012A'}),
    ('scalp lac', {'S01.01XA'}),
    ('bee sting', {'T63.441A'}),
    ('fall from bed', {'W06.XXXA'}),
    ('ibuprofen adverse effect', {'T39.315A'}),
    ('colon cancer', {'C18.9'}),
    ('prostate cancer', {'C61'}),
    ('hx of colon polyps', {'Z86.0100'}),
    ('status post cabg', {'Z95.1'}),
    ('pacemaker', {'Z95.0'}),
    ('vaginal yeast infection', {'B37.31'}),
    ('scabies', {'B86'}),
    ('hand foot mouth', {'B08.4'}),
    ('seborrheic keratosis', {'L82.1'}),
    ('actinic keratosis', {'L57.0'}),
    ('ed', {'N52.9'}),
    ('b12 deficiency anemia', {'D51.9'}),
    ('dementia', {'F03.90'}),
    ('parkinsons', {'G20.A1'}),
    ('panic attacks', {'F41.0'}),
    ('hyperlipidemia', {'E78.5'}),
    ('anxiety', {'F41.9'}),
    ('depression', {'F32.A'}),
    ('obesity', {'E66.9'}),
    ('chest wall pain', {'R07.89'}),
    ('acute cystitis with hematuria', {'N30.01'}),
    ('pyelonephritis', {'N10', 'N12'}),
    ('otitis externa right', {'H60.331', 'H60.91'}),
    ('sprained right knee', {'S83.91XA'}),
    ('left hip oa', {'M16.12'}),
    ('vitamin b12 deficiency', {'E53.8'}),
    ('hypokalemia', {'E87.6'}),
    ('dehydration', {'E86.0'}),
    ('acute kidney injury', {'N17.9'}),
    ('sepsis', {'A41.9'}),
    ('cellulitis of face', {'L03.211'}),
    ('fracture left clavicle', {'S42.002A', 'S42.009A'}),
    ('laceration right index finger', {'S61.200A', 'S61.210A'}),
    ('poisoning by aspirin accidental', {'T39.011A'}),
    ('struck by baseball', {'W21.03XA'}),
    ('melanoma of back', {'C43.59'}),
    ('benign neoplasm of colon', {'D12.6'}),
    ('family history of colon cancer', {'Z80.0'}),
    ('screening mammogram', {'Z12.31'}),
    ('encounter for contraceptive counseling', {'Z30.09'}),
    ('allergy to penicillin', {'Z88.0'}),
    ('nicotine dependence vaping', {'F17.290'}),
    ('opioid dependence', {'F11.20'}),
    ('pregnancy test positive', {'Z32.01'}),
    ('morbid obesity', {'E66.01'}),
    ('acute bronchitis', {'J20.9'}),
    ('chronic sinusitis', {'J32.9'}),
    ('strep pharyngitis', {'J02.0'}),
    ('viral uri', {'J06.9'}),
    ('otitis media with effusion left', {'H65.02', 'H65.22', 'H65.92'}),
    ('allergic conjunctivitis both eyes', {'H10.13', 'H10.45'}),
    ('hypertensive heart disease with heart failure', {'I11.0'}),
    ('chronic diastolic heart failure', {'I50.32'}),
    ('stable angina', {'I20.89', 'I20.9', 'I25.118', 'I25.119'}),
    ('hypertriglyceridemia', {'E78.1'}),
    ('gout', {'M10.9'}),
    ('low back pain with sciatica right', {'M54.41'}),
    ('right shoulder pain', {'M25.511'}),
    ('left knee pain', {'M25.562'}),
    ('ankle fracture left lateral malleolus', {
        'S82.62XA', 'S82.64XA', 'S82.65XA', 'S82.66XA', 'S82.892A'}),
    ('closed fracture of right wrist', {'S52.501A', 'S62.101A', 'S62.91XA'}),
    ('contusion of left thigh', {'S70.12XA'}),
    ('puncture wound of right foot', {'S91.301A', 'S91.331A'}),
    ('burn of right hand first degree', {'T23.101A', 'T23.111A', 'T23.191A'}),
    ('insect bite of arm', {
        'S40.861A', 'S40.862A', 'S40.869A', 'S50.861A', 'S50.862A', 'S50.869A', 'W57.XXXA'}),
    ('motor vehicle accident passenger', {'V43.53XA', 'V43.63XA', 'V49.9XXA', 'V89.2XXA'}),
    ('fall on ice', {'W00.0XXA'}),
    ('overdose of oxycodone intentional', {'T40.2X2A'}),
    ('alcohol intoxication', {'F10.129', 'F10.920', 'Y90.9'}),
    ('hepatitis c chronic', {'B18.2'}),
    ('hiv positive asymptomatic', {'Z21'}),
    ('pregnancy 20 weeks', {'Z3A.20'}),
    ('urinary incontinence', {'R32'}),
    ('vertigo', {'H81.10', 'H81.399', 'H81.90', 'R42'}),
    ('anemia', {'D64.9'}),
]

CPT_LATER: list[tuple[str, set[str]]] = [
    ('elbow joint injection', {'20605'}),
    ('hip injection', {'20610'}),
    ('toe joint aspiration', {'20600'}),
    ('wart removal liquid nitrogen', {'17110'}),
    ('skin biopsy shave', {'11102'}),
    ('removal of 10 skin tags', {'11200'}),
    ('incision and drainage of boil', {'10060'}),
    ('laceration repair hand 3 cm', {'12002'}),
    ('lip laceration repair 1.5 cm', {'12011'}),
    ('wrist splint', {'29125'}),
    ('posterior ankle splint', {'29515'}),
    ('tape ankle', {'29540'}),
    ('breathing treatment', {'94640'}),
    ('pft', {'94010'}),
    ('im ceftriaxone injection administration', {'96372'}),
    ('immunization admin single', {'90471'}),
    ('iud placement', {'58300'}),
    ('strep test', {'87880'}),
    ('flu swab', {'87804'}),
    ('ecg 12 lead', {'93000'}),
    ('point of care glucose', {'82962'}),
    ('depression screening', {'96127'}),
    ('blood draw', {'36415'}),
    ('tobacco counseling 8 minutes', {'99406'}),
    ('new patient office visit 45 minutes', {'99204'}),
    ('established visit high complexity', {'99215'}),
    ('preventive visit 70 year old established', {'99397'}),
    ('well baby new patient', {'99381'}),
    ('awv initial', {'G0438'}),
    ('tdap vaccine', {'90715'}),
    ('influenza vaccine quadrivalent preservative free', {'90686'}),
    ('removal of iud', {'58301'}),
    ('punch bx 2 lesions', {'11104', '11105'}),
    ('destruction of 20 actinic keratoses', {'17000', '17003', '17004'}),
    ('i&d complicated abscess', {'10061'}),
    ('ear irrigation bilateral', {'69209'}),
    ('office visit new patient 60 min', {'99205'}),
    ('est pt straightforward', {'99212'}),
    ('urinalysis automated with microscopy', {'81001'}),
    ('urine pregnancy test', {'81025'}),
    ('ekg interpretation only', {'93010'}),
    ('capillary blood draw', {'36416'}),
    ('smoking cessation 15 minutes', {'99407'}),
    ('long leg splint', {'29505'}),
    ('knee strapping', {'29530'}),
    ('trigger point injection 3 muscles', {'20553'}),
    ('tennis elbow injection', {'20551'}),
    ('well child 8 year old new patient', {'99383'}),
    ('preventive visit teen established', {'99394'}),
    ('spirometry pre and post bronchodilator', {'94060'}),
    ('joint aspiration knee', {'20610'}),
    ('steroid injection shoulder', {'20610'}),
    ('excision of nail matrix', {'11750'}),
    ('remove foreign body skin', {'10120'}),
    ('shave biopsy 2 lesions', {'11102', '11103'}),
    ('cryotherapy ak x3', {'17000', '17003'}),
    ('laceration repair scalp 6 cm', {'12002'}),
    ('repair 8 cm laceration thigh', {'12004'}),
    ('nebulized albuterol', {'94640'}),
    ('flu vaccine', {'90656', '90658', '90686', '90688'}),
    ('tb skin test', {'86580'}),
    ('hemoglobin a1c', {'83036'}),
    ('lipid panel', {'80061'}),
    ('cbc', {'85025', '85027'}),
    ('pregnancy test urine', {'81025'}),
    ('office visit established 40 minutes', {'99215'}),
    ('new patient 30 minute visit', {'99203'}),
    ('annual wellness visit first', {'G0438'}),
    ('pap smear collection', {'Q0091'}),
    ('removal of sutures', {'15851', '99024'}),
]


def test_later_query_sets_top5_hit_rate(ref) -> None:  # noqa: ANN001
    for queries, search in ((ICD_LATER, search_icd10), (CPT_LATER, search_cpt)):
        misses = _misses(ref, queries, search)
        hit = 1 - len(misses) / len(queries)
        assert hit >= 0.90, f"top-5 hit {hit:.1%}; misses:\n" + "\n".join(misses)
