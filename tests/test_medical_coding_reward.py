"""The medical-coding reward: each rule of the module docstring, and perfect = 1.0 everywhere."""

from __future__ import annotations

import random

import pytest

from clarus_env import open_reference
from clarus_env.splits import SPLITS
from clarus_env.tasks.medical_coding.notes import generate_episode
from clarus_env.tasks.medical_coding.reward import (
    cpt_similarity,
    feedback_text,
    icd_similarity,
    normalize_cpt,
    normalize_icd,
    score_submission,
)

STREP = {"primary_icd10": "J02.0", "secondary_icd10s": [], "cpt_codes": ["99213"]}
CKD = {"primary_icd10": "E11.22", "secondary_icd10s": ["I12.9", "N18.31"], "cpt_codes": ["99214"]}


@pytest.fixture(scope="module")
def ref():
    return open_reference()


def sub(
    primary: str = "", secondary: list[str] | None = None, cpt: list[str] | None = None
) -> dict:
    return {"primary_icd10": primary, "secondary_icd10s": secondary or [], "cpt_codes": cpt or []}


def score(ref, expected, submitted) -> float:
    return score_submission(expected, submitted, ref)[0]


def test_exact_is_one_with_and_without_secondaries(ref) -> None:
    assert score(ref, STREP, sub("J02.0", [], ["99213"])) == 1.0
    assert score(ref, CKD, sub("E11.22", ["N18.31", "I12.9"], ["99214"])) == 1.0


def test_docstring_worked_examples(ref) -> None:
    assert score(ref, STREP, sub("J02.9", [], ["99213"])) == 0.6
    assert score(ref, STREP, sub("J02.0", ["R07.0"], ["99213"])) == 0.75
    assert score(ref, STREP, sub("J02.0", [], ["99214"])) == 0.833333
    assert score(ref, STREP, sub()) == 0.0
    assert score(ref, CKD, sub("E11.22", ["N18.30", "I10", "I10", "E11"], ["99214"])) == 0.81


def test_partial_credit_scale(ref) -> None:
    assert icd_similarity("E11.22", "E11.21", ref) == (0.5, "subcategory")
    assert icd_similarity("E11.22", "E11.9", ref) == (0.4, "category")
    assert icd_similarity("S93.401A", "S93.409A", ref) == (0.6, "subcategory")
    assert icd_similarity("S93.401A", "S93.401D", ref) == (0.2, "wrong_7th_character")
    assert icd_similarity("S93.401A", "S93.402A", ref) == (0.2, "wrong_side")
    assert icd_similarity("I10", "I12.9", ref) == (0.1, "block")
    assert icd_similarity("I10", "J02.0", ref) == (0.0, "none")


@pytest.mark.parametrize(
    ("expected", "false", "true_less_specific"),
    [
        ("S93.401A", "S93.401D", "S93.409A"),  # initial vs subsequent encounter
        ("S93.401A", "S93.402A", "S93.409A"),  # right vs left ankle
        ("M17.11", "M17.12", "M17.9"),  # right vs left knee OA
        ("M17.11", "M17.0", "M17.10"),  # right vs bilateral
        ("H66.91", "H66.93", "H66.90"),  # right ear vs both ears
        ("L03.115", "L03.116", "L03.119"),
        ("S52.521A", "S52.521S", "S52.509A"),  # sequela for an initial encounter
        ("Z96.651", "Z96.652", "Z96.659"),
    ],
)
def test_a_clinically_false_sibling_never_beats_a_true_less_specific_code(
    ref, expected: str, false: str, true_less_specific: str
) -> None:
    f = icd_similarity(expected, false, ref)[0]
    t = icd_similarity(expected, true_less_specific, ref)[0]
    assert 0 < f < t, (expected, false, f, true_less_specific, t)
    # and so in the whole reward, as primary and as secondary
    exp = {"primary_icd10": expected, "secondary_icd10s": [], "cpt_codes": ["99213"]}
    assert score(ref, exp, sub(false, [], ["99213"])) < score(
        ref, exp, sub(true_less_specific, [], ["99213"]))


def test_cpt_partial_credit() -> None:
    assert cpt_similarity("99213", "99213") == 1.0
    assert cpt_similarity("99213", "99214") == 0.5
    assert cpt_similarity("99213", "99215") == 0.25
    assert cpt_similarity("99203", "99213") == 0.25
    assert cpt_similarity("99396", "99386") == 0.25
    assert cpt_similarity("12001", "12002") == 0.25
    assert cpt_similarity("99213-25", "99213") == 0.5
    assert cpt_similarity("99213", "20610") == 0.0
    assert cpt_similarity("99213", "99396") == 0.0


def test_modifiers_are_scored_by_kind() -> None:
    # laterality: the other side is false (0.2), no side is less specific (0.6)
    assert cpt_similarity("20610-RT", "20610-LT") == 0.2
    assert cpt_similarity("20610-RT", "20610-50") == 0.2
    assert cpt_similarity("20550-RT", "20550-F1") == 0.2
    assert cpt_similarity("20610-RT", "20610") == 0.6
    assert cpt_similarity("20610", "20610-RT") == 0.6
    assert cpt_similarity("20550-RT", "20550-F7") == 0.6
    assert cpt_similarity("20610-RT", "20610-LT") < cpt_similarity("20610-RT", "20610")
    # distinct service: 25 missing or extra
    assert cpt_similarity("99213-25", "99213") == 0.5
    assert cpt_similarity("99213", "99213-25") == 0.5
    # informational
    assert cpt_similarity("87880", "87880-QW") == 0.8
    # kinds multiply
    assert cpt_similarity("20610-25-RT", "20610-LT") == pytest.approx(0.1)


ACCEPT_NONE = {"primary_icd10": [], "icd10": {}, "cpt": {}, "optional_icd10": [],
               "optional_cpt": []}


def accept(**kw) -> dict:
    return {**ACCEPT_NONE, **kw}


def test_accepted_alternatives_score_one(ref) -> None:
    lipid = {"primary_icd10": "I10", "secondary_icd10s": ["E78.5"], "cpt_codes": ["99213"]}
    acc = accept(icd10={"E78.5": ["E78.00"]})
    assert score_submission(lipid, sub("I10", ["E78.00"], ["99213"]), ref, acc)[0] == 1.0
    assert score_submission(lipid, sub("I10", ["E78.00"], ["99213"]), ref)[0] < 1.0
    # both the expected and the alternative: the alternative is an extra code
    assert score_submission(lipid, sub("I10", ["E78.5", "E78.00"], ["99213"]), ref, acc)[0] < 1
    # sequencing-free pair: either etiology code first
    ckd = {"primary_icd10": "E11.22", "secondary_icd10s": ["I12.9", "N18.31"],
           "cpt_codes": ["99214"]}
    acc = accept(primary_icd10=["E11.22", "I12.9"])
    r, b = score_submission(ckd, sub("I12.9", ["E11.22", "N18.31"], ["99214"]), ref, acc)
    assert r == 1.0 and "sequencing" in feedback_text(b)
    assert score_submission(ckd, sub("N18.31", ["E11.22", "I12.9"], ["99214"]), ref, acc)[0] < 1
    # modifiers and payer-dependent codes
    proc = {"primary_icd10": "M65.321", "secondary_icd10s": [], "cpt_codes": ["20550-RT"]}
    acc = accept(cpt={"20550-RT": ["20550-F6"]})
    assert score_submission(proc, sub("M65.321", [], ["20550-F6"]), ref, acc)[0] == 1.0
    assert score_submission(proc, sub("M65.321", [], ["20550-F1"]), ref, acc)[0] < 0.8
    wax = {"primary_icd10": "H61.23", "secondary_icd10s": [], "cpt_codes": ["69210-50"]}
    acc = accept(cpt={"69210-50": ["69210"]})
    assert score_submission(wax, sub("H61.23", [], ["69210"]), ref, acc)[0] == 1.0


def test_optional_codes_neither_add_nor_cost(ref) -> None:
    inj = {"primary_icd10": "S93.401A", "secondary_icd10s": ["W01.0XXA"], "cpt_codes": ["99213"]}
    acc = accept(optional_icd10=["Y92", "Y93", "Y99"])
    with_y = sub("S93.401A", ["W01.0XXA", "Y92.009", "Y93.01", "Y99.8"], ["99213"])
    assert score_submission(inj, with_y, ref, acc)[0] == 1.0
    assert score_submission(inj, with_y, ref)[0] < 1.0
    # optional families do not excuse anything else
    assert score_submission(inj, sub("S93.401A", ["Y92.009"], ["99213"]), ref, acc)[0] < 1.0
    knee = {"primary_icd10": "M17.11", "secondary_icd10s": [], "cpt_codes": ["20610-RT"]}
    acc = accept(optional_cpt=["J3301"])
    assert score_submission(knee, sub("M17.11", [], ["20610-RT", "J3301"]), ref, acc)[0] == 1.0


def test_invalid_and_non_billable_codes_count_as_wrong(ref) -> None:
    r, b = score_submission(STREP, sub("J02", [], ["99213"]), ref)  # J02 is a category
    assert b["primary"]["status"] == "invalid" and r == pytest.approx(0.25 / 0.75)
    r, b = score_submission(STREP, sub("ZZZ.99", [], ["99213"]), ref)
    assert b["primary"]["status"] == "invalid"
    r, b = score_submission(
        STREP, sub("J02.0", ["E11", "Q99.99"], ["99213", "00000", "99213-ZZ"]), ref
    )
    assert b["secondary"]["invalid"] == ["E11", "Q99.99"]
    assert set(b["cpt"]["invalid"]) == {"00000", "99213-ZZ"}
    assert b["secondary"]["score"] == 0.0
    assert b["cpt"]["score"] == pytest.approx(2 / 4)
    text = feedback_text(b)
    assert "E11" in text and "00000" in text


def test_extra_codes_cost(ref) -> None:
    base = score(ref, CKD, sub("E11.22", ["N18.31", "I12.9"], ["99214"]))
    extra = score(ref, CKD, sub("E11.22", ["N18.31", "I12.9", "E78.5"], ["99214"]))
    extra_cpt = score(ref, CKD, sub("E11.22", ["N18.31", "I12.9"], ["99214", "93000"]))
    assert base == 1.0 and extra < base and extra_cpt < base


def test_empty_secondaries_component(ref) -> None:
    _, b = score_submission(STREP, sub("J02.0", [], ["99213"]), ref)
    assert b["secondary"]["active"] is False
    r = score(ref, CKD, sub("E11.22", [], ["99214"]))
    assert r == pytest.approx(0.75)


def test_duplicates_and_normalization(ref) -> None:
    assert (
        score(ref, CKD, sub("e1122", ["n18.31", "N1831", "i12.9", " I12.9 "], ["99214", "99214"]))
        == 1.0
    )
    _, b = score_submission(CKD, sub("E11.22", ["N18.31", "N18.31", "I12.9"], ["99214"]), ref)
    assert b["secondary"]["duplicates"] == 1
    assert normalize_icd(" s93.401a ") == "S93.401A"
    assert (
        normalize_cpt("99213 25")
        == normalize_cpt("9921325")
        == normalize_cpt("99213-25")
        == "99213-25"
    )
    assert normalize_cpt("20610-lt") == "20610-LT"
    assert (
        score(
            ref,
            {**STREP, "cpt_codes": ["20610-RT", "99213-25"]},
            sub("J02.0", [], ["99213 25", "20610rt"]),
        )
        == 1.0
    )


def test_order_independent(ref) -> None:
    a = score(ref, CKD, sub("E11.22", ["I12.9", "N18.31"], ["99214"]))
    b = score(ref, CKD, sub("E11.22", ["N18.31", "I12.9"], ["99214"]))
    assert a == b == 1.0


def test_sequencing_matters(ref) -> None:
    swapped = score(ref, CKD, sub("I12.9", ["E11.22", "N18.31"], ["99214"]))
    assert swapped < 0.6


def test_garbage_input_does_not_crash(ref) -> None:
    r, b = score_submission(
        STREP, {"primary_icd10": None, "secondary_icd10s": "J02.0", "cpt_codes": [3]}, ref
    )
    assert r == 0.0
    assert isinstance(feedback_text(b), str)


def test_perfect_answers_score_one_and_feedback_hides_answer(ref) -> None:
    for seed in list(SPLITS["dev"]) + list(range(1000, 1150)):
        for case in generate_episode(seed, ref)["cases"]:
            exp = case["expected"]
            r, b = score_submission(exp, dict(exp), ref)
            assert r == 1.0, (seed, exp)
            text = feedback_text(b)
            wrong = score_submission(exp, sub("R69"), ref)[1]
            wtext = feedback_text(wrong)
            for code in [exp["primary_icd10"], *exp["secondary_icd10s"], *exp["cpt_codes"]]:
                assert code not in wtext, (code, wtext)
            assert "exact match" in text


def test_random_garbage_scores_near_zero(ref) -> None:
    rng = random.Random(5)
    icd = (
        ref.table("icd10cm")
        .filter(ref.table("icd10cm").column("billable"))
        .column("code")
        .to_pylist()
    )
    cpts = [r for r in ref.table("hcpcs_rvu").column("hcpcs").to_pylist() if r[0].isdigit()]
    total, n = 0.0, 0
    for seed in range(1000, 1100):
        for case in generate_episode(seed, ref)["cases"]:
            guess = sub(
                rng.choice(icd),
                rng.sample(icd, rng.randint(0, 3)),
                rng.sample(cpts, rng.randint(1, 2)),
            )
            total += score(ref, case["expected"], guess)
            n += 1
    assert total / n < 0.05


def test_deterministic(ref) -> None:
    s = sub("E11.21", ["N18.30", "I10"], ["99213"])
    assert score_submission(CKD, s, ref) == score_submission(CKD, s, ref)


def test_readme_worked_examples_for_sides_and_encounters(ref) -> None:
    knee = {"primary_icd10": "M17.11", "secondary_icd10s": [], "cpt_codes": ["20610-RT"]}
    assert score(ref, knee, sub("M17.11", [], ["20610"])) == 0.866667
    assert score(ref, knee, sub("M17.9", [], ["20610-RT"])) == 0.6
    assert score(ref, knee, sub("M17.10", [], ["20610"])) == 0.533333
    assert score(ref, knee, sub("M17.12", [], ["20610-LT"])) == 0.2
    ankle = {"primary_icd10": "S93.401A", "secondary_icd10s": ["W01.0XXA"], "cpt_codes": ["99213"]}
    acc = accept(optional_icd10=["Y92", "Y93", "Y99"])
    assert score_submission(ankle, sub("S93.409A", ["W01.0XXA"], ["99213"]), ref, acc)[0] == 0.8
    assert score_submission(ankle, sub("S93.401D", ["W01.0XXD"], ["99213"]), ref, acc)[0] == 0.4
    full = sub("S93.401A", ["W01.0XXA", "Y92.009", "Y93.01"], ["99213"])
    assert score_submission(ankle, full, ref, acc)[0] == 1.0
    assert score_submission(ankle, full, ref)[0] == 0.875


def test_false_sibling_is_only_asked_within_a_category(ref) -> None:
    # both titles name a side, but they are different conditions: no credit at all
    assert icd_similarity("H61.22", "S96.921D", ref) == (0.0, "none")
    assert icd_similarity("M17.12", "S83.91XA", ref)[0] == 0.0


def test_resolve_submission_shows_what_the_reward_credits(ref) -> None:
    from clarus_env.tasks.medical_coding.reward import resolve_submission

    ckd = {"primary_icd10": "E11.22", "secondary_icd10s": ["I12.9", "N18.31"],
           "cpt_codes": ["99214"]}
    acc = accept(primary_icd10=["E11.22", "I12.9"], icd10={"N18.31": ["N18.30"]})
    exp, got = resolve_submission(ckd, sub("i129", ["E11.22", "N18.30", "N18.30"], ["99214"]), acc)
    assert exp == {"primary_icd10": "I12.9", "secondary_icd10s": ["E11.22", "N18.31"],
                   "cpt_codes": ["99214"]}
    assert got == exp


def test_an_em_level_set_by_time_or_by_mdm_is_right_either_way(ref) -> None:
    """AMA 2021: the level may be selected by MDM or by total time. Where the note's time
    and its MDM give different levels, the higher is expected and the other scores 1.0 too."""
    from clarus_env.scenario_store import load_scenario
    from clarus_env.splits import seeds

    found = 0
    for seed in seeds("dev", "medical_coding"):
        for case in load_scenario("medical_coding", seed)["cases"]:
            alts = {k: v for k, v in case["accept"].get("cpt", {}).items()
                    if k.startswith("992")}
            for code, others in alts.items():
                assert "min" in case["clinical_note"].lower()  # the note states a time
                exp = case["expected"]
                swapped = [others[0] if c == code else c for c in exp["cpt_codes"]]
                got = sub(exp["primary_icd10"], exp["secondary_icd10s"], swapped)
                assert score_submission(exp, got, ref, case["accept"])[0] == 1.0
                assert score_submission(exp, got, ref)[0] < 1.0
                found += 1
    assert found >= 10
