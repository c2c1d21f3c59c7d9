"""`clarus eval --workers N`: a process pool gives the serial run's results, in its order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clarus_env.cli import main
from clarus_env.evaluation import chunks, evaluate
from clarus_env.tasks import TASKS


def _without_timing(results: dict) -> dict:
    return {k: v for k, v in results.items() if k != "seconds"}


@pytest.mark.parametrize("agent", ["random", "heuristic", "oracle"])
def test_workers_give_the_serial_results_in_order(agent: str) -> None:
    # the coding task's random and heuristic agents search the code sets: seconds an episode
    tasks = [t for t in TASKS if agent == "oracle" or t != "medical_coding"]
    serial = evaluate(agent, tasks, "dev", trials=2, limit=5, progress=False, workers=1)
    pooled = evaluate(agent, tasks, "dev", trials=2, limit=5, progress=False, workers=2)
    assert [(e["task"], e["seed"], e["trial"]) for e in pooled["episodes"]] == \
        [(t, s, k) for t in tasks for s in range(50_000, 50_005) for k in range(2)]
    assert _without_timing(pooled) == _without_timing(serial)


def test_cli_out_file_is_byte_identical_across_worker_counts(tmp_path: Path) -> None:
    texts = []
    for w in (1, 2, 3):
        out = tmp_path / f"w{w}.json"
        assert main(["eval", "--agent", "oracle", "--task", "all", "--split", "test",
                     "--limit", "4", "--workers", str(w), "--quiet", "--out", str(out)]) == 0
        doc = json.loads(out.read_text())
        doc.pop("seconds")
        texts.append(json.dumps(doc, sort_keys=True))
    assert texts[0] == texts[1] == texts[2]


def test_chunks_cover_the_plan_in_order() -> None:
    plan = [("t", s, k) for s in range(137) for k in range(3)]
    for workers in (1, 2, 7, 500):
        parts = chunks(plan, workers)
        assert [x for p in parts for x in p] == plan
        assert all(parts)


def test_bad_worker_count_and_backend_are_named() -> None:
    with pytest.raises(ValueError, match="workers must be at least 1"):
        evaluate("random", ["deductive_liability"], "dev", limit=1, progress=False, workers=0)
    with pytest.raises(ValueError, match="unknown backend 'spark'"):
        evaluate("random", ["deductive_liability"], "dev", limit=1, progress=False,
                 backend="spark")


def test_one_progress_bar_counts_every_episode_across_workers(monkeypatch) -> None:  # noqa: ANN001
    import tqdm

    bars: list[dict] = []

    class Recorder:
        def __init__(self, total: int, **_: object) -> None:
            bars.append({"total": total, "done": 0, "closed": False})

        def update(self, n: int = 1) -> None:
            bars[-1]["done"] += n

        def close(self) -> None:
            bars[-1]["closed"] = True

    monkeypatch.setattr(tqdm, "tqdm", Recorder)
    evaluate("random", ["deductive_liability", "abductive_conflict"], "dev", trials=3, limit=7,
             workers=2)
    assert bars == [{"total": 42, "done": 42, "closed": True}]
