"""The env pool a worker fills at start: first resets run on the event loop, and an env that
was pre-built (and reset once) plays exactly the episode a fresh env plays."""

from __future__ import annotations

import pytest

from clarus_env.env import make
from clarus_env.server.app import _warm
from clarus_env.server.sessions import SessionManager, WouldBlock
from clarus_env.splits import seeds
from clarus_env.tasks import TASKS, get_task

TASK = "deductive_liability"


def test_prewarmed_envs_serve_first_resets_on_the_loop_and_then_it_runs_out() -> None:
    sm = SessionManager(capacity=16, per_client=16)
    assert sm.prewarm(3) == 3 * len(TASKS)
    assert all(sm.pool.size(task, "train") == 3 for task in TASKS)
    for i in range(3):  # what the event loop tries first: no thread hop, no env build
        sm.reset(TASK, seeds("train", TASK)[i], None, f"first-{i}", nowait=True)
    assert sm.pool.size(TASK, "train") == 0
    with pytest.raises(WouldBlock):  # the pool is empty: this one would build an env
        sm.reset(TASK, seeds("train", TASK)[3], None, "fourth", nowait=True)
    assert sm.prewarm(3) == 3  # tops up only what ran out
    assert all(sm.pool.size(task, "train") == 3 for task in TASKS)


def test_the_pool_never_holds_more_than_the_capacity_per_kind() -> None:
    sm = SessionManager(capacity=4, per_client=4)
    sm.prewarm(100)
    assert all(sm.pool.size(task, "train") == 4 for task in TASKS)


def test_a_prewarmed_env_plays_the_same_episode_as_a_fresh_one() -> None:
    sm = SessionManager(capacity=4, per_client=4)
    sm.prewarm(1)
    seed = seeds("train", TASK)[5]
    key, obs = sm.reset(TASK, seed, None, "pooled", nowait=True)
    fresh = make(TASK)
    assert obs == fresh.reset(seed=seed).model_dump()
    from clarus_env.scenario_store import load_scenario

    for action in get_task(TASK).oracle(load_scenario(TASK, seed)):
        out = sm.step(key, action, nowait=True)
        want = fresh.step(action)
        assert out["observation"] == want.observation.model_dump()
        assert (out["reward"], out["done"]) == (want.reward, want.done)
    assert out["done"] and out["info"]["grade"] == want.info["grade"]


def test_the_warm_up_fills_the_pool_when_asked() -> None:
    sm = SessionManager(capacity=8, per_client=8)
    _warm(False, sm, 2)
    assert all(sm.pool.size(task, "train") == 2 for task in TASKS)
    idle = SessionManager(capacity=8, per_client=8)
    _warm(False, idle, 0)  # apps built with create_app() elsewhere do not pre-build
    assert all(idle.pool.size(task, "train") == 0 for task in TASKS)
