"""The medical_coding env: the seed's observation and action, lookups over the real code
sets that cost budget, invalid actions, and the acceptance figures on the frozen splits."""

from __future__ import annotations

import pytest

import clarus_env
from clarus_env.evaluation import evaluate
from clarus_env.tasks import get_task


@pytest.fixture()
def env():  # noqa: ANN201
    e = clarus_env.make("medical_coding")
    e.reset(seed=1001)
    return e


def submit(primary: str = "", secondary: list[str] | None = None,
           cpt: list[str] | None = None) -> dict:
    return {"action_type": "submit_codes", "parameters": {
        "primary_icd10": primary, "secondary_icd10s": secondary or [], "cpt_codes": cpt or []}}


def test_observation_has_the_seed_fields_and_real_patients(env) -> None:  # noqa: ANN001
    obs = env.reset(seed=50_000)
    d = obs.model_dump()
    for f in ("patient_age", "patient_sex", "clinical_note", "feedback", "remaining_tasks",
              "done", "step_number"):
        assert f in d
    assert isinstance(obs.patient_age, int) and obs.patient_sex in ("female", "male")
    assert len(obs.clinical_note) > 80 and obs.remaining_tasks == 3 and not obs.done


def test_three_cases_then_done_and_grade(env) -> None:  # noqa: ANN001
    plan = get_task("medical_coding").oracle(env.scenario)
    rewards = []
    for i, action in enumerate(plan):
        res = env.step(action)
        rewards.append(res.reward)
        assert res.observation.remaining_tasks == 2 - i
        assert res.done == (i == 2)
    assert rewards == [1.0, 1.0, 1.0]
    grade = res.info["grade"]
    assert grade["score"] == 1.0 and grade["passed"] == 3 and grade["total"] == 3
    assert env.step(plan[0]).observation.last_action_error.startswith("the episode is done")


def test_lookups_use_the_real_code_sets_and_cost_budget(env) -> None:  # noqa: ANN001
    res = env.step({"action_type": "search_icd10",
                    "parameters": {"query": "type 2 diabetes with hyperglycemia"}})
    assert res.reward == 0.0 and res.observation.api_calls_used == 1
    top = res.observation.last_action_result["results"][0]
    assert top["code"] == "E11.65" and top["billable"] is True
    res = env.step({"action_type": "search_cpt",
                    "parameters": {"query": "office visit established low"}})
    assert res.observation.last_action_result["results"][0]["code"] == "99213"
    res = env.step({"action_type": "get_icd10", "parameters": {"code": "e11"}})
    node = res.observation.last_action_result
    assert node["billable"] is False and node["parent"] == "E08-E13"
    assert "excludes1" in node
    assert res.observation.remaining_tasks == 3  # lookups are not graded


def test_invalid_actions_explain_cost_like_billing_and_change_nothing(env) -> None:  # noqa: ANN001
    used = 0
    for bad, words in [
        ({"action_type": "submit_codes", "parameters": {"primary_icd10": "J02.0"}},
         "secondary_icd10s is required"),
        ({"action_type": "submit_codes", "parameters": {
            "primary_icd10": 5, "secondary_icd10s": [], "cpt_codes": []}}, "primary_icd10"),
        ({"action_type": "fetch_eob", "parameters": {}}, "unknown action_type"),
        ({"action_type": "get_icd10", "parameters": {"code": "ZZZ.99"}}, "not in the ICD-10-CM"),
        ("nonsense", "must be an object"),
    ]:
        res = env.step(bad)
        assert words in res.observation.last_action_error, (bad, res.observation)
        assert res.reward == -0.02 and res.observation.remaining_tasks == 3
        assert res.observation.api_calls_used == used + 1  # one budget call, like billing
        assert res.info["api_calls_remaining"] == get_task(
            "medical_coding").api_call_budget - res.observation.api_calls_used
        used = res.observation.api_calls_used


def test_step_before_reset_returns_a_clear_error() -> None:
    e = clarus_env.make("medical_coding")
    res = e.step(submit("J02.0", [], ["99213"]))
    assert res.observation.last_action_error == "no episode: call reset() first"
    assert res.done and res.reward == 0.0 and res.observation.clinical_note == ""
    e.reset(seed=1001)  # and the env still works afterwards
    assert e.step(submit("J02.0", [], ["99213"])).observation.last_action_error is None


def test_budget_ends_the_episode_and_unsubmitted_cases_score_zero(env) -> None:  # noqa: ANN001
    res = None
    for _ in range(get_task("medical_coding").api_call_budget):
        res = env.step({"action_type": "search_cpt", "parameters": {"query": "visit"}})
    assert res is not None and res.done
    assert res.info["grade"]["score"] == 0.0
    assert res.info["grade"]["ended_by"] == "API call budget exhausted"


def test_feedback_never_reveals_expected_codes(env) -> None:  # noqa: ANN001
    for seed in range(50_000, 50_040):
        env.reset(seed=seed)
        expected = [c["expected"] for c in env.scenario["cases"]]
        res = env.step(submit("R69", [], ["99499"]))
        codes = {expected[0]["primary_icd10"], *expected[0]["secondary_icd10s"],
                 *expected[0]["cpt_codes"]} - {"R69", "99499"}
        for code in codes:
            assert code not in res.observation.feedback, (seed, code)


def test_perfect_answer_is_one_even_without_secondaries(env) -> None:  # noqa: ANN001
    for seed in range(50_000, 50_150):
        env.reset(seed=seed)
        for case in env.scenario["cases"]:
            if not case["expected"]["secondary_icd10s"]:
                res = env.step({"action_type": "submit_codes",
                                "parameters": dict(case["expected"])})
                assert res.reward == 1.0
                return
            env.step({"action_type": "submit_codes", "parameters": dict(case["expected"])})
    pytest.fail("no case without secondary codes in dev")


@pytest.mark.parametrize("split", ["dev", "test"])
def test_oracle_is_perfect_and_random_is_near_zero(split: str) -> None:
    oracle = evaluate("oracle", ["medical_coding"], split, progress=False)
    assert oracle["summary"]["medical_coding"]["coding"]["exact_match_rate"] == 1.0
    rnd = evaluate("random", ["medical_coding"], split, progress=False)
    assert rnd["summary"]["medical_coding"]["mean_score"] < 0.05


def test_invalid_action_observation_matches_the_schema(env) -> None:  # noqa: ANN001
    import json
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[1] / "schemas"
                         / "coding_observation.schema.json").read_text())
    res = env.step({"action_type": "fetch_eob", "parameters": {}})
    jsonschema.validate(res.observation.model_dump(), schema)
    res = clarus_env.make("medical_coding").step({"action_type": "search_cpt",
                                                   "parameters": {"query": "visit"}})
    jsonschema.validate(res.observation.model_dump(), schema)
