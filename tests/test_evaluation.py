"""pass^k arithmetic, the eval/regrade round trip, and the CLI table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clarus_env.evaluation import (
    dump,
    evaluate,
    format_table,
    outcome_correct,
    pass_hat_k,
    regrade,
)


def test_pass_hat_k_is_combinatorial() -> None:
    assert pass_hat_k(3, 3, 3) == 1.0
    assert pass_hat_k(0, 4, 1) == 0.0
    assert pass_hat_k(2, 4, 1) == 0.5
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(3, 4, 2) == pytest.approx(3 / 6)
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 3)


@pytest.fixture(scope="module")
def random_results() -> dict:
    return evaluate("random", ["deductive_liability"], "dev", trials=2, limit=4, progress=False)


def test_random_eval_shape(random_results: dict) -> None:
    s = random_results["summary"]["deductive_liability"]
    assert s["scenarios"] == 4 and s["episodes"] == 8
    assert set(s["pass_hat_k"]) == {"1", "2"}
    assert s["pass_hat_k"]["2"] <= s["pass_hat_k"]["1"]
    table = format_table(random_results)
    assert "pass^2" in table and "deductive_liability" in table


def test_regrade_round_trip_and_tamper_detection(random_results: dict, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    dump(random_results, str(path))
    stored = json.loads(path.read_text())
    assert regrade(stored) == []
    stored["episodes"][0]["grade"]["score"] = 0.999
    diffs = regrade(stored)
    assert len(diffs) == 1 and "seed" in diffs[0]


def test_regrade_rejects_other_files() -> None:
    with pytest.raises(ValueError, match="clarus-eval-results"):
        regrade({"format": "something-else"})


def test_outcome_accuracy_leads_the_report() -> None:
    """Outcome accuracy counts episodes whose every outcome check passed; process checks
    cannot buy it. The oracle gets all of them, random none; the table shows it first."""
    oracle = evaluate("oracle", ["abductive_conflict", "medical_coding"], "dev", limit=3,
                      progress=False)
    rnd = evaluate("random", ["abductive_conflict"], "dev", limit=3, progress=False)
    for s in oracle["summary"].values():
        assert s["outcome_accuracy"] == 1.0 == s["outcome_pass_hat_k"]["1"] == s["pass_rate"]
    assert rnd["summary"]["abductive_conflict"]["outcome_accuracy"] == 0.0
    head = format_table(oracle).splitlines()[1]
    assert head.index("outcome acc") < head.index("pass^1") < head.index("score")
    for e in oracle["episodes"]:
        checks = e["grade"]["checks"]
        if e["task"] != "medical_coding":
            assert {c["family"] for c in checks} >= {"process", "evidence", "outcome"}
            assert e["grade"]["outcome_correct"] is True


def test_outcome_correct_reads_billing_and_coding_grades() -> None:
    assert outcome_correct({"grade": {"outcome_correct": True, "passed": 1, "total": 2}})
    assert not outcome_correct({"grade": {"outcome_correct": False, "passed": 2, "total": 2}})
    assert outcome_correct({"grade": {"cases": [{"reward": 1.0}] * 3, "passed": 3, "total": 3}})
    assert not outcome_correct({"grade": {"cases": [{"reward": 1.0}, {"reward": 0.6}],
                                          "passed": 1, "total": 2}})
    assert not outcome_correct({"grade": None})


def test_coding_f1_credits_what_the_reward_credits() -> None:
    """An accepted alternative (here 20550-F6 for 20550-RT, E78.00 for E78.5) is a hit in the
    micro-F1 figures too, not only in the reward."""
    from clarus_env.evaluation import coding_metrics

    case = {"difficulty": "easy", "reward": 1.0,
            "expected": {"primary_icd10": "M65.322", "secondary_icd10s": ["E78.5"],
                         "cpt_codes": ["20550-RT"]},
            "accept": {"icd10": {"E78.5": ["E78.00"]}, "cpt": {"20550-RT": ["20550-F6"]}},
            "submitted": {"primary_icd10": "M65.322", "secondary_icd10s": ["E78.00"],
                          "cpt_codes": ["20550-F6"]}}
    m = coding_metrics([{"cases": [case]}])
    assert m["icd10cm_micro_f1"] == 1.0 and m["cpt_micro_f1"] == 1.0
