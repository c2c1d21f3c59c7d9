"""`clarus eval --backend ray`: a local Ray cluster's actor pool gives the serial results."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from clarus_env.evaluation import evaluate

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install '.[ray]')")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_actor_pool_gives_the_serial_results(local_ray: None) -> None:
    for agent, tasks in (("random", ["deductive_liability", "adversarial_fabrication"]),
                         ("oracle", ["abductive_conflict", "medical_coding"])):
        serial = evaluate(agent, tasks, "dev", trials=2, limit=4, progress=False)
        on_ray = evaluate(agent, tasks, "dev", trials=2, limit=4, progress=False, workers=2,
                          backend="ray")
        serial.pop("seconds")
        on_ray.pop("seconds")
        assert on_ray == serial


def test_ray_oracle_passes_everything_in_plan_order(local_ray: None) -> None:
    res = evaluate("oracle", ["abductive_conflict"], "test", limit=6, progress=False,
                   workers=0, backend="ray")  # 0: one actor per CPU of the cluster
    assert [e["seed"] for e in res["episodes"]] == list(range(90_000, 90_006))
    assert res["summary"]["abductive_conflict"]["pass_rate"] == 1.0
