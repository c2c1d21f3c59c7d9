"""pass^k arithmetic, the eval/regrade round trip, and the CLI table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clarus_env.evaluation import (
    dump,
    evaluate,
    format_table,
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
