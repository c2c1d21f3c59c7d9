"""Baselines for the medical_coding arena: the oracle is perfect, the keyword heuristic sits
clearly between random and the oracle and does worse on hard notes than on easy ones."""

from __future__ import annotations

import inspect
import subprocess
import sys
from statistics import mean

import pytest

import clarus_env
from clarus_env.splits import seeds
from clarus_env.tasks import get_task
from clarus_env.tasks.medical_coding import heuristic
from clarus_env.tasks.medical_coding.heuristic import HeuristicAgent

DEV = seeds("dev", "medical_coding")
HEURISTIC_SEEDS = DEV  # the whole dev split: 60 seeds put hard and easy within noise


@pytest.fixture(scope="module")
def env():
    e = clarus_env.make("medical_coding", split="dev")
    yield e
    e.close()


@pytest.fixture(scope="module")
def heuristic_runs(env):
    """One heuristic episode per seed: (grade, steps taken, per-case (note, age, action))."""
    agent = HeuristicAgent(reference=env.reference)
    runs = []
    for seed in HEURISTIC_SEEDS:
        obs = env.reset(seed=seed)
        agent.reset(obs)
        steps, actions = 0, []
        done = False
        while not done and steps < 100:
            action = agent.act(obs)
            actions.append((obs.clinical_note, obs.patient_age, action))
            result = env.step(action)
            obs, done = result.observation, result.done
            steps += 1
        runs.append((seed, result.info.get("grade"), steps, actions, obs))
    return runs


def test_oracle_is_perfect_on_every_dev_seed(env) -> None:
    oracle = get_task("medical_coding").oracle
    for seed in DEV:
        env.reset(seed=seed)
        for action in oracle(env.scenario):
            result = env.step(action)
            assert result.reward == 1.0, (seed, action)
        assert result.done
        assert result.info["grade"]["score"] == 1.0, seed


def test_heuristic_scores_between_random_and_oracle(heuristic_runs) -> None:
    score = mean(grade["score"] for _, grade, *_ in heuristic_runs)
    assert 0.05 < score < 1.0
    assert score >= 0.2


def test_heuristic_is_worse_on_hard_cases_than_easy(heuristic_runs) -> None:
    by: dict[str, list[float]] = {"easy": [], "medium": [], "hard": []}
    for _, grade, *_ in heuristic_runs:
        for case in grade["cases"]:
            by[case["difficulty"]].append(case["reward"])
    assert all(len(v) == len(HEURISTIC_SEEDS) for v in by.values())
    assert mean(by["hard"]) < mean(by["easy"])


def test_heuristic_ends_every_episode_within_budget(heuristic_runs) -> None:
    budget = get_task("medical_coding").api_call_budget
    for seed, grade, steps, actions, obs in heuristic_runs:
        assert grade is not None, seed
        assert grade["ended_by"] == "all cases coded", seed
        assert steps <= budget and obs.api_calls_used <= budget, seed
        assert obs.done
        for _, _, action in actions:
            assert action["action_type"] in (
                "submit_codes",
                "search_icd10",
                "search_cpt",
                "get_icd10",
            )
        assert obs.last_action_error is None, seed


def test_heuristic_never_raises_on_its_own(env, heuristic_runs) -> None:
    """``act`` has a safety net; the coder behind it must not need it on real notes."""
    agent = HeuristicAgent(reference=env.reference)
    for _, _, _, actions, _ in heuristic_runs:
        for note, age, _ in actions:
            params = agent.code_note(note, age)
            assert params["primary_icd10"] or params["cpt_codes"]
    agent.reset({})
    for obs in (
        {},
        {"clinical_note": ""},
        {"clinical_note": "garbage\n::", "patient_age": None},
        {"clinical_note": "A: 1. 2. ;;\nP: 999 minutes", "patient_age": -3},
    ):
        action = agent.act(obs)
        assert action["action_type"] == "submit_codes"


def test_heuristic_reads_no_catalog_or_generator_data() -> None:
    source = inspect.getsource(heuristic)
    code = "\n".join(
        line for line in source.splitlines() if line.lstrip().startswith(("import ", "from "))
    )
    for forbidden in ("catalog", "notes", "scenario", "expected", "oracle", "reward"):
        assert forbidden not in code, forbidden
    assert ".json" not in source
    probe = (
        "import sys\n"
        "from clarus_env.tasks.medical_coding.heuristic import HeuristicAgent\n"
        "a = HeuristicAgent()\n"
        "a.reset({})\n"
        "act = a.act({'clinical_note': 'CC: sore throat\\nAssessment: strep pharyngitis.\\n"
        "Plan: rapid strep test performed in office. MDM: low.', 'patient_age': 30})\n"
        "assert act['parameters']['primary_icd10'], act\n"
        "bad = [m for m in sys.modules if m.endswith(('medical_coding.catalog',"
        " 'medical_coding.notes', 'medical_coding.task', 'medical_coding.reward'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)
