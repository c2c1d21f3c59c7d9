"""A private salt (``CLARUS_SCENARIO_SALT``) gives every seed a scenario nobody can compile
without it: same generators and checks, different bytes, still deterministic."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import clarus_env
from clarus_env.scenario import SALT_ENV, canonical_json, compile_scenario
from clarus_env.scenario_store import load_scenario
from clarus_env.tasks import TASKS


@pytest.mark.parametrize("task", TASKS)
def test_salted_scenarios_differ_and_stay_deterministic(task: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    public = canonical_json(load_scenario(task, 90000))
    monkeypatch.setenv(SALT_ENV, "operator-secret-1")
    first = canonical_json(compile_scenario(task, 90000))
    assert first != public
    assert canonical_json(compile_scenario(task, 90000)) == first
    assert canonical_json(load_scenario(task, 90000)) == first  # never the public bundle
    monkeypatch.setenv(SALT_ENV, "operator-secret-2")
    assert canonical_json(compile_scenario(task, 90000)) not in (first, public)


def test_salt_is_the_same_in_another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    code = ("import sys; from clarus_env.scenario import compile_scenario, canonical_json; "
            "sys.stdout.write(canonical_json(compile_scenario('deductive_liability', 90001)))")
    env = {**os.environ, SALT_ENV: "s3cret", "PYTHONHASHSEED": "7"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    monkeypatch.setenv(SALT_ENV, "s3cret")
    assert out == canonical_json(compile_scenario("deductive_liability", 90001))


def test_the_env_plays_salted_scenarios_and_the_oracle_still_passes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from clarus_env.evaluation import evaluate

    public_case = load_scenario("abductive_conflict", 90002)["case"]
    monkeypatch.setenv(SALT_ENV, "leaderboard-2026")
    env = clarus_env.make("abductive_conflict", split="test")
    obs = env.reset(seed=90002)
    assert obs.case_id != public_case["case_id"]
    assert json.dumps(obs.model_dump()).find(public_case["claim_id"]) == -1
    results = evaluate("oracle", ["deductive_liability", "abductive_conflict",
                                  "adversarial_fabrication"], "test", limit=5, progress=False)
    for s in results["summary"].values():
        assert s["pass_rate"] == 1.0


def test_the_public_splits_cannot_be_rebuilt_with_a_salt(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from pipelines.lib.scenario_bundle import compile_split

    monkeypatch.setenv(SALT_ENV, "x")
    with pytest.raises(ValueError, match="CLARUS_SCENARIO_SALT is set"):
        compile_split("deductive_liability", "test", [90000], None)


@pytest.mark.parametrize("task", ["deductive_liability", "abductive_conflict",
                                  "adversarial_fabrication"])
def test_a_salted_seed_answer_cannot_be_read_off_the_public_split(
        task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The public dev/test bundles hold each seed's expected answer; a salted set must not
    share them seed by seed (branches and strata are drawn with the salt too)."""
    seeds = range(50_000, 50_060)  # dev seeds of every billing task
    public = [load_scenario(task, s)["expected"]["finding"] for s in seeds]
    monkeypatch.setenv(SALT_ENV, "private-board")
    salted = [compile_scenario(task, s)["expected"]["finding"] for s in seeds]
    same = sum(a == b for a, b in zip(public, salted, strict=True)) / len(public)
    # chance agreement of two independent draws from the task's shares stays well below 0.6
    assert same < 0.6, same


def test_side_streams_are_salted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A generator's own nuisance streams (``side_stream``) follow the salt as ``rng_for``
    does: under a private salt a seed's check-in, refund clock or claims-system lag shares
    nothing with the public seed of the same number; unsalted, the stream is the one the
    committed splits were built with (their bytes are pinned by tests/test_scenarios.py)."""
    from random import Random

    from clarus_env.scenario import side_stream

    monkeypatch.delenv(SALT_ENV, raising=False)
    public = side_stream("deductive_liability", "checkin", 90000).random()
    assert public == Random("deductive_liability-checkin-90000").random()
    monkeypatch.setenv(SALT_ENV, "operator-secret-1")
    one = side_stream("deductive_liability", "checkin", 90000).random()
    assert one != public
    assert side_stream("deductive_liability", "checkin", 90000).random() == one
    monkeypatch.setenv(SALT_ENV, "operator-secret-2")
    assert side_stream("deductive_liability", "checkin", 90000).random() not in (one, public)
