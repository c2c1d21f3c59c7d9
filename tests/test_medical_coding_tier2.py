"""Tier 2 (codes from the ICD-10-CM tabular) and the code-disjoint splits: the pool validates
against the bundle, its wording never copies a title, phrasings are partitioned by split, held-out
codes never reach train, and the committed test split holds >= 30% cases whose primary code never
occurs in train."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from clarus_env.reference import open_reference
from clarus_env.scenario_store import load_scenario
from clarus_env.splits import seeds
from clarus_env.tasks.medical_coding import notes, tier2
from clarus_env.tasks.medical_coding.tabular_check import RAW_TABULAR


@pytest.fixture(scope="module")
def ref():
    return open_reference()


def test_pool_validates_against_the_bundle(ref) -> None:
    assert tier2.problems(ref) == []
    pool = tier2.load()["codes"]
    assert len(pool) >= 3000
    chapters = Counter(e["code"][0] for e in pool)
    assert len(chapters) >= 10, chapters


@pytest.mark.skipif(not sorted(RAW_TABULAR.glob("icd10c*-tabular-*.xml")),
                    reason="the CMS tabular XML is not staged")
def test_committed_pool_equals_a_fresh_build(ref) -> None:
    committed = json.loads(tier2.TIER2_FILE.read_text(encoding="utf-8"))
    assert tier2.build(ref) == committed


def test_manifestation_and_note_bearing_codes_are_left_out(ref) -> None:
    codes = {e["code"] for e in tier2.load()["codes"]}
    assert "G63" not in codes and "M14.60" not in codes  # "in diseases classified elsewhere"
    assert not any(c.startswith(("S", "T", "V", "W", "X", "Y", "Z", "O", "P")) for c in codes)
    curated = {c.split(".")[0] for c in notes.load_catalog().all_icd10_codes()}
    assert not any(c.split(".")[0] in curated for c in codes)


@pytest.mark.parametrize(
    ("title", "expect"),
    [
        ("Abscess of liver", "liver abscess"),
        ("Acute bronchitis, unspecified", "acute bronchitis"),
        ("Lattice degeneration of retina, left eye", "left eye lattice degeneration of retina"),
        ("Pneumonia due to Hemophilus influenzae",
         "pneumonia secondary to Hemophilus influenzae"),
        ("West Nile virus infection with encephalitis",
         "West Nile virus infection w/ encephalitis"),
    ],
)
def test_rephrase_gives_clinical_wording_never_the_title(title, expect) -> None:
    out = tier2.rephrase(title)
    assert expect in out
    assert title.lower() not in [p.lower() for p in out]


def test_phrasings_are_partitioned_and_held_out_codes_skip_train() -> None:
    for e in tier2.load()["codes"]:
        splits = e["phrases"]
        flat = [p for ps in splits.values() for p in ps]
        assert len(flat) == len(set(flat)), e["code"]
        role = tier2.role_of(e["code"])
        if role != "shared":
            assert set(splits) == {role}, e["code"]


def test_demographics_follow_the_tabular_words() -> None:
    assert tier2.demographics("Cyst of left ovary")[0] == "female"
    assert tier2.demographics("Hydrocele, unspecified")[0] == "male"
    assert tier2.demographics("Senile cataract")[1][0] >= 60
    assert tier2.demographics("Juvenile arthritis")[1][1] <= 17
    assert tier2.demographics("Acute bronchitis") == ("any", [0, 94])


def test_excludes1_conflicts(ref) -> None:
    assert tier2.excludes1_conflict(ref, "J20.9", "J40")
    assert tier2.excludes1_conflict(ref, "J40", "J20.9")
    assert not tier2.excludes1_conflict(ref, "I10", "J45.909")


def test_tier2_cases_fit_the_patient_and_avoid_excludes1(ref) -> None:
    pool = {e["code"]: e for e in tier2.load()["codes"]}
    for seed in range(90_000, 90_150):
        for case in notes.generate_episode(seed, ref)["cases"]:
            if case["tier"] != 2:
                continue
            e = pool[case["expected"]["primary_icd10"]]
            assert e["age"][0] <= case["patient_age"] <= e["age"][1], (seed, e["code"])
            assert e["sex"] in ("any", case["patient_sex"]), (seed, e["code"])
            for other in case["expected"]["secondary_icd10s"]:
                assert not tier2.excludes1_conflict(ref, e["code"], other), (seed, other)


@pytest.fixture(scope="module")
def committed():
    def cases(split):
        return [c for s in seeds(split, "medical_coding")
                for c in load_scenario("medical_coding", s)["cases"]]
    return {split: cases(split) for split in ("train", "dev", "test")}


def test_test_split_is_code_disjoint_enough(committed) -> None:
    train_codes = {code for c in committed["train"]
                   for code in [c["expected"]["primary_icd10"], *c["expected"]["secondary_icd10s"]]}
    for split in ("test", "dev"):
        unseen = [c for c in committed[split]
                  if c["expected"]["primary_icd10"] not in train_codes]
        assert len(unseen) / len(committed[split]) >= 0.30, (split, len(unseen))


def test_held_out_splits_use_their_own_phrasings(committed) -> None:
    """A tier-2 primary's wording in a dev/test note is never a train phrasing of that code."""
    pool = {e["code"]: e for e in tier2.load()["codes"]}
    for split in ("dev", "test"):
        for c in committed[split]:
            if c.get("tier") != 2:
                continue
            e = pool[c["expected"]["primary_icd10"]]
            note = c["clinical_note"]
            assert any(p in note for p in e["phrases"].get(split, [])), e["code"]
            leaked = [p for p in e["phrases"].get("train", []) if p in note
                      and not any(p in q for q in e["phrases"].get(split, []))]
            assert not leaked, (e["code"], leaked)
