"""The served process tunes its garbage collector once warm, and only that process."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, sys
{pre}
from clarus_env.server.app import tune_gc
before = gc.get_freeze_count()
tune_gc()
print(gc.get_threshold()[0], gc.get_freeze_count() > before)
"""


def run(pre: str = "", env_threshold: str | None = None) -> str:
    import os

    env = dict(os.environ)
    env.pop("CLARUS_GC_GEN0_THRESHOLD", None)
    if env_threshold is not None:
        env["CLARUS_GC_GEN0_THRESHOLD"] = env_threshold
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(pre=pre)], capture_output=True,
                         text=True, timeout=120, env=env, check=True)
    return out.stdout.split("\n")[-2]


def test_tune_gc_freezes_the_warm_heap_and_collects_the_young_less_often() -> None:
    assert run() == "10000 True"
    assert run(env_threshold="2500") == "2500 True"
    assert run(env_threshold="0") == "700 True"  # 0 keeps Python's default


def test_a_threshold_the_operator_set_is_left_alone() -> None:
    assert run(pre="gc.set_threshold(1234, 10, 10)") == "1234 True"


def test_apps_built_in_someone_elses_process_leave_its_collector_alone() -> None:
    import gc

    from clarus_env.server.app import create_app

    threshold = gc.get_threshold()
    from fastapi.testclient import TestClient

    with TestClient(create_app()) as client:  # warms in the background, as served
        assert client.get("/health").status_code == 200
        warming = client.app.state.warming  # type: ignore[attr-defined]
        import time

        deadline = time.monotonic() + 60
        while not warming.done() and time.monotonic() < deadline:
            time.sleep(0.1)
    assert gc.get_threshold() == threshold
