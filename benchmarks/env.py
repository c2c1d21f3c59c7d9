"""Env speed figures per task: oracle episodes/s, p50 µs per step / reset / grade, and
compile scenarios/s — each with a same-process baseline to read it against.

Run: ``.venv/bin/python benchmarks/env.py [--episodes N] [--tasks ...]`` (one core).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def p50_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def bench_task(task: str, episodes: int) -> None:
    from clarus_env.actions import validate
    from clarus_env.agents.oracle import OracleAgent
    from clarus_env.env import make
    from clarus_env.grader import grade
    from clarus_env.reference import open_reference
    from clarus_env.scenario import compile_scenario
    from clarus_env.scenario_store import load_scenario
    from clarus_env.splits import seeds

    ref = open_reference()
    dev = list(seeds("dev"))
    scenarios = [load_scenario(task, s) for s in dev]
    compile_scenario(task, dev[0], ref)  # warm the bundle's lazy tables
    env = make(task, reference=ref)
    coding = task == "medical_coding"
    plans = []
    for sc in scenarios:
        agent = OracleAgent(task)
        agent.reset(None, seed=sc["seed"], scenario=sc)
        plans.append(agent._plan)

    resets, steps, grades, validates = [], [], [], []
    t_all = time.perf_counter()
    for i in range(episodes):
        sc = scenarios[i % len(scenarios)]
        t = time.perf_counter()
        env.reset(scenario=sc)
        resets.append(time.perf_counter() - t)
        for action in plans[i % len(plans)]:
            t = time.perf_counter()
            res = env.step(action)
            steps.append(time.perf_counter() - t)
            if res.done:
                break
        assert res.info["grade"]["passed"] == res.info["grade"]["total"], (task, sc["seed"])
    took = time.perf_counter() - t_all
    if not coding:  # re-grade the last episode's database: the grader's own cost
        for _ in range(200):
            t = time.perf_counter()
            grade(env.db, env.task.checks)
            grades.append(time.perf_counter() - t)
    from clarus_env.actions import ACTIONS, CODING_ACTIONS

    for action in plans[0]:
        t = time.perf_counter()
        validate(action, CODING_ACTIONS if coding else ACTIONS)
        validates.append(time.perf_counter() - t)

    n = 300  # seeds no split holds: compiled here for the first time
    t = time.perf_counter()
    for s in range(700_000, 700_000 + n):
        compile_scenario(task, s, ref)
    compiled = n / (time.perf_counter() - t)
    t = time.perf_counter()
    for s in range(800_000, 800_000 + n):
        compile_scenario(task, s, ref, validate=False)
    compiled_novalidate = n / (time.perf_counter() - t)
    text = [json.dumps(sc) for sc in scenarios]
    t = time.perf_counter()
    for x in text:
        json.loads(x)
    loads = len(text) / (time.perf_counter() - t)
    unit = "cases" if coding else "scenarios"
    per = 3 if coding else 1
    grade_txt = "graded per submission" if coding else f"grade {p50_us(grades):.0f} µs"
    print(f"{task}: oracle {episodes / took:,.0f} episodes/s "
          f"({len(steps) / episodes:.1f} steps each); p50 step {p50_us(steps):.0f} µs "
          f"(action validation alone {p50_us(validates):.1f} µs), reset {p50_us(resets):.0f} µs, "
          f"{grade_txt}; compile {compiled * per:,.0f} {unit}/s "
          f"({compiled_novalidate * per:,.0f}/s without schema validation; json.loads of the "
          f"same scenarios {loads:,.0f}/s)")


def main() -> None:
    from clarus_env.tasks import TASKS

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--episodes", type=int, default=2000)
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    args = p.parse_args()
    for task in args.tasks:
        bench_task(task, args.episodes)


if __name__ == "__main__":
    main()
