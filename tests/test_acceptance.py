"""The benchmark's headline numbers, asserted on the frozen splits: the oracle is perfect,
random is near zero, and the heuristic sits between them, lower on harder tasks."""

from __future__ import annotations

import pytest

from clarus_env.evaluation import evaluate
from clarus_env.tasks import BILLING_TASKS


@pytest.fixture(scope="module")
def dev_scores() -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for agent in ("oracle", "heuristic", "random"):
        r = evaluate(agent, BILLING_TASKS, "dev", progress=False)
        out[agent] = {t: s["mean_score"] for t, s in r["summary"].items()}
        out[agent + "_pass"] = {t: s["pass_hat_k"]["1"] for t, s in r["summary"].items()}
    return out


@pytest.mark.parametrize("split", ["dev", "test"])
def test_oracle_passes_every_check_on_every_scenario(split: str) -> None:
    r = evaluate("oracle", BILLING_TASKS, split, progress=False)
    for task, s in r["summary"].items():
        assert s["pass_hat_k"]["1"] == 1.0, (task, s["most_failed"])
        assert s["agent_errors"] == 0


def test_random_scores_below_a_tenth(dev_scores: dict) -> None:
    for task, score in dev_scores["random"].items():
        assert score < 0.10, (task, score)


def test_heuristic_between_random_and_oracle_on_dev(dev_scores: dict
                                                                       ) -> None:
    h, r = dev_scores["heuristic"], dev_scores["random"]
    hp = dev_scores["heuristic_pass"]
    for task in BILLING_TASKS:
        assert r[task] < h[task], task
        assert dev_scores["random_pass"][task] < hp[task] < 1.0 == dev_scores["oracle_pass"][task]


def test_heuristic_is_lowest_on_the_hardest_task_on_test() -> None:
    """The hardest task (dates, time zones, counter-arguments) is the heuristic's lowest on the
    test split, where issue 8's acceptance measures the ordering: 0.848 adversarial against
    0.940 abductive and 0.900 deductive on issue 8's eighth-round splits. On dev (150 scenarios)
    adversarial 0.907 is above deductive 0.900 (abductive 0.960); the README's known
    limitations say so."""
    r = evaluate("heuristic", BILLING_TASKS, "test", progress=False)
    hp = {t: s["pass_hat_k"]["1"] for t, s in r["summary"].items()}
    assert hp["adversarial_fabrication"] < min(hp["deductive_liability"],
                                               hp["abductive_conflict"]), hp
