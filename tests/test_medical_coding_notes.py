"""Seeded notes: shape, determinism, variety, split disjointness, guideline invariants, speed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clarus_env import open_reference
from clarus_env.scenario import rng_for
from clarus_env.splits import SPLITS
from clarus_env.tasks.medical_coding.notes import generate_case, generate_episode
from clarus_env.tasks.medical_coding.reward import cpt_valid, icd_valid, normalize_cpt


@pytest.fixture(scope="module")
def ref():
    return open_reference()


@pytest.fixture(scope="module")
def train(ref):
    return [generate_episode(s, ref) for s in SPLITS["train"]]


def _notes(episodes):
    return [c["clinical_note"] for ep in episodes for c in ep["cases"]]


def test_episode_shape(ref) -> None:
    ep = generate_episode(1001, ref)
    assert sorted(ep["order"]) == ["easy", "hard", "medium"]
    assert [c["difficulty"] for c in ep["cases"]] == ep["order"]
    for case in ep["cases"]:
        assert set(case) >= {
            "patient_age",
            "patient_sex",
            "clinical_note",
            "difficulty",
            "expected",
            "rules",
            "negated",
        }
        assert case["patient_sex"] in ("female", "male")
        assert 0 <= case["patient_age"] <= 100
        assert set(case["expected"]) == {"primary_icd10", "secondary_icd10s", "cpt_codes"}
        json.dumps(case)


def test_order_varies(train) -> None:
    assert len({tuple(ep["order"]) for ep in train}) == 6


def test_train_notes_all_distinct(train) -> None:
    notes = _notes(train)
    assert len(set(notes)) == len(notes) == 3 * len(SPLITS["train"])


def test_at_least_10k_distinct_notes() -> None:
    """Train has 1,200 episodes = 3,600 notes; the generator's variety is checked past 10,000."""
    ref = open_reference()
    notes = {
        c["clinical_note"] for s in range(1000, 4400) for c in generate_episode(s, ref)["cases"]
    }
    assert len(notes) >= 10_000


def test_dev_and_test_notes_disjoint_from_train(train, ref) -> None:
    train_notes = set(_notes(train))
    for split in ("dev", "test"):
        notes = set(_notes(generate_episode(s, ref) for s in SPLITS[split]))
        assert not notes & train_notes, split


def test_expected_codes_valid_and_consistent(train, ref) -> None:
    for ep in train:
        for case in ep["cases"]:
            exp = case["expected"]
            icds = [exp["primary_icd10"], *exp["secondary_icd10s"]]
            assert len(icds) == len(set(icds))
            assert all(icd_valid(c, ref) for c in icds), icds
            assert exp["cpt_codes"] and all(
                cpt_valid(normalize_cpt(c), ref) for c in exp["cpt_codes"]
            )
            # external causes (V00-Y99) are never first-listed
            assert not exp["primary_icd10"].startswith(("V", "W", "X", "Y"))
            negated = {n["code"] for n in case["negated"]}
            assert not negated & set(icds), (negated, icds)
            for n in case["negated"]:
                assert n["phrase"] in case["clinical_note"]


def test_demographics_match_codes(train) -> None:
    for ep in train:
        for case in ep["cases"]:
            exp, age, sex = case["expected"], case["patient_age"], case["patient_sex"]
            icds = [exp["primary_icd10"], *exp["secondary_icd10s"]]
            if sex == "male":
                assert not any(
                    c.startswith(
                        ("O", "Z3A", "Z34", "N76", "N94", "N95", "N92", "Z30", "B37.3", "Z85.3")
                    )
                    for c in icds
                ), icds
            if sex == "female":
                assert not any(c.startswith(("N40", "N52", "Z85.46")) for c in icds), icds
            for cpt in exp["cpt_codes"]:
                base = cpt.split("-")[0]
                if base.startswith(("9938", "9939")):
                    band = int(base[-1])
                    lo, hi = {
                        1: (0, 0),
                        2: (1, 4),
                        3: (5, 11),
                        4: (12, 17),
                        5: (18, 39),
                        6: (40, 64),
                        7: (65, 200),
                    }[band]
                    assert lo <= age <= hi, (cpt, age)
            if any(c.startswith("Z00.12") for c in icds):
                assert age < 18
            if any(c.startswith("Z00.0") for c in icds):
                assert age >= 18


def test_hard_cases_exercise_guidelines(train) -> None:
    hard = [c for ep in train for c in ep["cases"] if c["difficulty"] == "hard"]
    rules = " ".join(r for c in hard for r in c["rules"])
    for needle in (
        "7th character",
        "external cause",
        "uncertain dx",
        "history of vs current",
        "modifier 25",
        "laterality modifier",
        "negated findings",
        "combination",
    ):
        assert needle in rules, needle
    assert sum(bool(c["negated"]) for c in hard) > 0.8 * len(hard)
    modifiers = {
        cpt.split("-", 1)[1] for c in hard for cpt in c["expected"]["cpt_codes"] if "-" in cpt
    }
    assert {"25", "RT", "LT"} <= modifiers
    assert any(
        code.endswith("D")
        for c in hard
        for code in c["expected"]["secondary_icd10s"] + [c["expected"]["primary_icd10"]]
    )


def test_easy_is_one_condition_and_medium_has_several(train) -> None:
    for ep in train:
        for case in ep["cases"]:
            exp = case["expected"]
            if case["difficulty"] == "easy":
                assert len(exp["cpt_codes"]) <= 2
    medium = [c for ep in train for c in ep["cases"] if c["difficulty"] == "medium"]
    assert sum(len(c["expected"]["secondary_icd10s"]) >= 1 for c in medium) > 0.9 * len(medium)


def test_generate_case_uses_only_its_rng(ref) -> None:
    a = generate_case(rng_for("medical_coding", 7), ref, "hard")
    b = generate_case(rng_for("medical_coding", 7), ref, "hard")
    assert a == b
    with pytest.raises(ValueError):
        generate_case(rng_for("medical_coding", 7), ref, "extreme")


def test_deterministic_across_processes(ref) -> None:
    code = (
        "import json,sys; from clarus_env import open_reference; "
        "from clarus_env.tasks.medical_coding.notes import generate_episode; "
        "print(json.dumps([generate_episode(s, open_reference()) for s in (1001, 50000, 90001)],"
        " sort_keys=True))"
    )
    outs = set()
    for hashseed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": hashseed, "PATH": ""},
        ).stdout
        outs.add(out)
    assert len(outs) == 1
    here = json.dumps([generate_episode(s, ref) for s in (1001, 50000, 90001)], sort_keys=True)
    assert outs == {here + "\n"}


# -- payer, modifier 25 on preventive + vaccine, acceptable alternatives (issue 9) -----------
def test_the_note_states_the_payer_and_vaccine_codes_follow_it(train) -> None:
    vaccine_cases = 0
    for ep in train:
        for case in ep["cases"]:
            payer = case["payer"]
            last = case["clinical_note"].splitlines()[-1]
            assert ("Medicare" in last) == (payer == "medicare"), last
            assert payer == ("medicare" if case["patient_age"] >= 65 else "commercial")
            cpt = case["expected"]["cpt_codes"]
            if "90656" not in cpt:
                continue
            vaccine_cases += 1
            prev = [c for c in cpt if c.startswith(("9938", "9939"))]
            assert len(prev) == 1
            if payer == "medicare":  # G0008; NCCI does not pair it with the visit
                assert "G0008" in cpt and "90471" not in cpt and "-25" not in prev[0]
            else:  # 90471 is paired with 99381-99397 (indicator 1): the visit carries 25
                assert "90471" in cpt and prev[0].endswith("-25"), cpt
    assert vaccine_cases >= 20


def _alternative_answers(case):  # noqa: ANN001, ANN202
    """Every single-substitution answer the case's ``accept`` allows."""
    exp = case["expected"]
    acc = {"icd10": {}, "cpt": {}, "primary_icd10": [], "optional_icd10": [], "optional_cpt": [],
           **case["accept"]}
    out = []
    for code, alts in acc["icd10"].items():
        for alt in alts:
            out.append({
                "primary_icd10": alt if exp["primary_icd10"] == code else exp["primary_icd10"],
                "secondary_icd10s": [alt if c == code else c for c in exp["secondary_icd10s"]],
                "cpt_codes": list(exp["cpt_codes"])})
    for code, alts in acc["cpt"].items():
        for alt in alts:
            out.append({**exp, "cpt_codes": [alt if c == code else c for c in exp["cpt_codes"]]})
    codes = [exp["primary_icd10"], *exp["secondary_icd10s"]]
    for first in acc["primary_icd10"]:
        out.append({"primary_icd10": first,
                    "secondary_icd10s": [c for c in codes if c != first],
                    "cpt_codes": list(exp["cpt_codes"])})
    if acc["optional_icd10"]:
        out.append({**exp, "secondary_icd10s": [*exp["secondary_icd10s"], "Y92.009", "Y93.01",
                                                "Y99.8"]})
    if acc["optional_cpt"]:
        out.append({**exp, "cpt_codes": [*exp["cpt_codes"], *acc["optional_cpt"]]})
    return out


def test_every_accepted_alternative_is_valid_and_scores_one(train, ref) -> None:
    from clarus_env.tasks.medical_coding.reward import score_submission

    kinds = {"icd10": 0, "cpt": 0, "primary_icd10": 0, "optional_icd10": 0, "optional_cpt": 0}
    for ep in train:
        for case in ep["cases"]:
            acc = {**dict.fromkeys(("primary_icd10", "optional_icd10", "optional_cpt"), []),
                   "icd10": {}, "cpt": {}, **case["accept"]}
            assert all(case["accept"].values())  # only what applies is written
            for k in kinds:
                kinds[k] += bool(acc[k])
            for alts in acc["icd10"].values():
                assert all(icd_valid(a, ref) for a in alts), alts
            for alts in acc["cpt"].values():
                assert all(cpt_valid(normalize_cpt(a), ref) for a in alts), alts
            assert all(cpt_valid(a, ref) for a in acc["optional_cpt"])
            for answer in _alternative_answers(case):
                r, b = score_submission(case["expected"], answer, ref, acc)
                assert r == 1.0, (case["expected"], answer, b)
            # the answer key itself still scores 1.0 with the alternatives in force
            assert score_submission(case["expected"], dict(case["expected"]), ref, acc)[0] == 1.0
    assert all(n > 0 for n in kinds.values()), kinds
