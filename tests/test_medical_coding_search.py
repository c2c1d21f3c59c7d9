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
    for _, want in ICD_QUERIES:
        for code in want:
            assert ref.icd10cm(code)["billable"], code
    for _, want in CPT_QUERIES:
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
