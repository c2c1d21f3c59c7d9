"""An insurer's cost-sharing error may be appealed as well as sent back for reprocessing.

The EOB that took too much deductible, coinsurance or out-of-pocket paid less than the plan
owes: a reduction of a benefit, so an adverse benefit determination (29 CFR 2560.503-1(m)(4))
the member may appeal within 180 days (45 CFR 147.136). Most billers ask for reprocessing
first; a written internal appeal is as right, and the domain reviewers of rounds 6 and 7 asked
that both be accepted. A practice's own error is not the insurer's determination: an appeal
there is the wrong filing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from clarus_env.env import ClarusEnv
from clarus_env.reference import open_reference
from clarus_env.scenario import compile_scenario
from clarus_env.tasks import get_task

TASK = "deductive_liability"
SEEDS = range(700_000, 700_120)  # outside every split


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    ref = open_reference()
    return [compile_scenario(TASK, s, ref) for s in SEEDS]


def _as_appeal(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(plan)
    for a in out:
        if a["action_type"] == "draft_resolution":
            a["parameters"]["resolution_type"] = "appeal"
        if a["action_type"] == "check_deadline":
            a["parameters"]["deadline_type"] = "internal_appeal"
    return out


def _grade(env: ClarusEnv, sc: dict[str, Any], plan: list[dict[str, Any]]) -> dict[str, bool]:
    env.reset(scenario=copy.deepcopy(sc))
    r = None
    for a in plan:
        r = env.step(a)
        assert r.observation.last_action_error is None, r.observation.last_action_error
        if r.done:
            break
    assert r is not None and r.done
    return {ch["id"]: ch["passed"] for ch in r.info["grade"]["checks"]}


def test_insurer_errors_accept_an_appeal_and_nothing_else_does(
        scenarios: list[dict[str, Any]]) -> None:
    by_party: dict[str, int] = {}
    for sc in scenarios:
        exp = sc["expected"]
        by_party[exp["responsible_party"]] = by_party.get(exp["responsible_party"], 0) + 1
        if exp["responsible_party"] == "insurer":
            assert exp["resolution_type"] == "claim_reprocessing"
            assert exp["accepted_resolutions"] == ["claim_reprocessing", "appeal"]
        else:
            assert "appeal" not in exp["accepted_resolutions"], sc["seed"]
    assert by_party.get("insurer", 0) >= 15 and by_party.get("provider", 0) >= 15, by_party


def test_an_appeal_of_an_insurer_error_passes_every_check_and_fails_elsewhere(
        scenarios: list[dict[str, Any]]) -> None:
    env = ClarusEnv(TASK)
    oracle = get_task(TASK).oracle
    insurer = [sc for sc in scenarios if sc["expected"]["responsible_party"] == "insurer"][:6]
    provider = [sc for sc in scenarios if sc["expected"]["responsible_party"] == "provider"][:6]
    assert len(insurer) == 6 and len(provider) == 6
    for sc in insurer:
        checks = _grade(env, sc, _as_appeal(oracle(sc)))
        assert all(checks.values()), (sc["seed"], [k for k, v in checks.items() if not v])
    for sc in provider:
        checks = _grade(env, sc, _as_appeal(oracle(sc)))
        assert not checks["resolution_type"], sc["seed"]
        assert all(v for k, v in checks.items() if k != "resolution_type"), sc["seed"]
