"""ClarusClient against a real uvicorn server: the seed README's snippet verbatim, a full
oracle episode, episode isolation between clients, and typed errors."""

from __future__ import annotations

import pytest

from clarus_env.client import (
    ClarusClient,
    ClarusConnectionError,
    ClarusError,
    ClarusHTTPError,
    InProcessClient,
)
from clarus_env.scenario_store import load_scenario
from clarus_env.tasks import get_task

from .serverutil import free_port, server  # noqa: F401  (module-scoped uvicorn fixture)


def oracle(task: str, seed: int) -> list[dict]:
    return get_task(task).oracle(load_scenario(task, seed))


def test_lazy_export() -> None:
    import clarus_env

    assert clarus_env.ClarusClient is ClarusClient
    assert "ClarusClient" in clarus_env.__all__


def test_seed_readme_snippet_verbatim(server: str, capsys: pytest.CaptureFixture) -> None:  # noqa: F811
    from clarus_env import ClarusClient

    with ClarusClient(server) as env:
        obs = env.reset(task_name="deductive_liability", seed=1001)
        print(obs["patient_complaint"])

        result = env.step({
            "action_type": "authenticate_patient",
            "parameters": {"patient_id": obs["case_id"]}
        })
        print(result["reward"])  # +0.05

    complaint, reward = capsys.readouterr().out.splitlines()
    assert "CLM-" in complaint
    assert reward == "0.05"
    assert set(result) == {"observation", "reward", "done", "info"}


@pytest.mark.parametrize("task, seed", [("deductive_liability", 1001),
                                        ("medical_coding", 1001)])
def test_full_oracle_episode(server: str, task: str, seed: int) -> None:  # noqa: F811
    plan = oracle(task, seed)
    with ClarusClient(server) as env:
        obs = env.reset(task_name=task, seed=seed)
        assert obs["task_name"] == task and "expected" not in obs
        results = [env.step(a) for a in plan]
        state = env.state()
    assert [r["done"] for r in results] == [False] * (len(plan) - 1) + [True]
    assert all(r["observation"]["last_action_error"] is None for r in results)
    grade = results[-1]["info"]["grade"]
    assert grade["passed"] == grade["total"]
    assert state == {"episode_id": env.episode_id, "task": task, "seed": seed,
                     "step_count": len(plan), "done": True, "score": grade["score"]}


def test_wire_and_in_process_agree(server: str) -> None:  # noqa: F811
    """Same seed, same actions: the HTTP client and the in-process one see the same episode."""
    plan = oracle("deductive_liability", 1001)[:6] + [{"action_type": "fetch_eob",
                                                      "parameters": {"claim_id": "nope"}}]
    with ClarusClient(server) as remote, InProcessClient() as local:
        assert remote.reset(task_name="deductive_liability", seed=1001) == \
            local.reset(task_name="deductive_liability", seed=1001)
        for action in plan:
            r, loc = remote.step(action), local.step(action)
            r["info"].pop("episode_id"), loc["info"].pop("episode_id")
            assert r == loc


def test_clients_never_share_an_episode(server: str) -> None:  # noqa: F811
    with ClarusClient(server) as a, ClarusClient(server) as b:
        obs_a = a.reset(task_name="deductive_liability", seed=1001)
        obs_b = b.reset(task_name="deductive_liability", seed=1002)
        assert a.episode_id != b.episode_id
        a.step({"action_type": "authenticate_patient",
                "parameters": {"patient_id": obs_a["case_id"]}})
        assert a.state()["step_count"] == 1
        assert b.state() == {"episode_id": b.episode_id, "task": "deductive_liability",
                             "seed": 1002, "step_count": 0, "done": False, "score": None}
        # resetting reuses the client's session rather than opening a new one
        first = a.episode_id
        a.reset(task_name="deductive_liability", seed=1003)
        assert a.episode_id == first and a.state()["step_count"] == 0
        assert obs_b["case_id"] != obs_a["case_id"]


def test_invalid_action_is_an_observation_not_an_exception(server: str) -> None:  # noqa: F811
    with ClarusClient(server) as env:
        env.reset(task_name="deductive_liability", seed=1001)
        res = env.step({"action_type": "fly_to_the_moon", "parameters": {}})
    assert res["reward"] == -0.02 and not res["done"]
    assert "unknown action_type" in res["observation"]["last_action_error"]


def test_unknown_task_is_a_typed_error(server: str) -> None:  # noqa: F811
    with ClarusClient(server) as env, pytest.raises(ClarusHTTPError) as err:
        env.reset(task_name="no_such_task", seed=1)
    assert (err.value.status, err.value.code) == (400, "unknown_task")
    assert "deductive_liability" in err.value.message
    assert isinstance(err.value, ClarusError)


def test_unknown_episode_is_a_typed_error(server: str) -> None:  # noqa: F811
    with ClarusClient(server, episode_id="no-such-episode") as env:
        with pytest.raises(ClarusHTTPError) as err:
            env.step({"action_type": "close_case", "parameters": {}})
        assert (err.value.status, err.value.code) == (404, "unknown_episode")
        with pytest.raises(ClarusHTTPError, match="unknown_episode"):
            env.state()


def test_step_before_reset_fails_locally(server: str) -> None:  # noqa: F811
    with ClarusClient(server) as env, pytest.raises(ClarusError, match="reset"):
        env.step({"action_type": "close_case", "parameters": {}})


def test_server_down_is_a_connection_error() -> None:
    with ClarusClient(f"http://127.0.0.1:{free_port()}", timeout=2.0) as env:
        with pytest.raises(ClarusConnectionError, match="cannot reach"):
            env.reset(task_name="deductive_liability", seed=1001)
        with pytest.raises(ClarusError):
            env.health()


def test_health_and_metadata(server: str) -> None:  # noqa: F811
    with ClarusClient(server + "/") as env:
        assert env.health()["status"] == "healthy"
        assert [t["name"] for t in env.metadata()["tasks"]][0] == "deductive_liability"
