"""Env speed figures per task: oracle episodes/s, p50 µs per step / reset / grade, and
compile scenarios/s — each with a same-process baseline to read it against.

Run: ``.venv/bin/python benchmarks/env.py [--episodes N] [--tasks ...]`` (one core).

``--loop`` times the loop a user runs instead (``clarus_env.evaluation.run_episode``: reset
from the frozen dev split, a fresh agent per episode, every step, the grade), because the
component figures above pre-load scenarios and pre-plan actions outside the timer and so
overstate what a user gets. ``--grades OUT`` writes every check result and score of the
oracle, heuristic and random agents over the committed dev and test splits, and
``--compare OLD NEW`` lists any difference: run it before and after a speed change.
"""

from __future__ import annotations

import argparse
import json
import os
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


def bench_loop(task: str, agent: str, rounds: int) -> tuple[float, float, float, float]:
    """Episodes/s and µs per episode of the user's loop over the dev split. Each episode is
    timed ``rounds`` times and its fastest run kept: on a shared machine another process's
    time slice lands in some runs of an episode, rarely in all of them. Also the CPU time
    per episode of the fastest whole pass (``time.process_time``: time spent waiting for a
    core is not counted, so two runs side by side on a loaded machine compare fairly)."""
    from clarus_env.env import make
    from clarus_env.evaluation import run_episode
    from clarus_env.splits import seeds

    env = make(task, split="dev")
    dev = list(seeds("dev", task))
    for s in dev[:10]:  # open the bundle and the split file once, outside the timer
        run_episode(env, agent, s, 0)
    best = dict.fromkeys(dev, float("inf"))
    clock = time.perf_counter
    cpu = float("inf")
    for _ in range(rounds):
        c = time.process_time()
        for s in dev:
            t = clock()
            run_episode(env, agent, s, 0)
            best[s] = min(best[s], clock() - t)
        cpu = min(cpu, time.process_time() - c)
    total = sum(best.values())
    statements = 0.0
    if task != "medical_coding":  # SQLite statements per episode, counted by SQLite itself
        n = [0]

        def count(_: str) -> None:
            n[0] += 1

        env.db.set_trace_callback(count)
        for s in dev:
            run_episode(env, agent, s, 0)
        env.db.set_trace_callback(None)
        statements = n[0] / len(dev)
    return len(dev) / total, total / len(dev) * 1e6, cpu / len(dev) * 1e6, statements


def bench_scale(agent: str, tasks: list[str], split: str, trials: int, workers: int) -> None:
    """``clarus eval`` episodes/s on 1 process (the baseline), ``workers`` processes and a
    local Ray with ``workers`` CPUs, same plan, results checked equal."""
    from clarus_env.evaluation import default_workers, evaluate

    workers = workers or default_workers()
    runs = [("1 process", {"workers": 1}), (f"{workers} processes", {"workers": workers})]
    try:
        import ray

        runs.append((f"Ray local, {workers} actors", {"workers": workers, "backend": "ray"}))
    except ImportError:
        ray = None
    base = None
    ref = None
    print(f"{agent} on {split}, {', '.join(tasks)}, {trials} trial(s)")
    print(f"{'run':<24}{'episodes':>9}{'seconds':>9}{'episodes/s':>12}{'× 1 process':>13}")
    for label, kw in runs:
        if kw.get("backend") == "ray" and ray is not None and not ray.is_initialized():
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        res = evaluate(agent, tasks, split, trials=trials, progress=False, **kw)
        n = len(res["episodes"])
        rate = n / res["seconds"]
        base = base or rate
        body = {k: v for k, v in res.items() if k != "seconds"}
        ref = ref or body
        same = "" if body == ref else "  RESULTS DIFFER"
        print(f"{label:<24}{n:>9}{res['seconds']:>9.2f}{rate:>12,.0f}{rate / base:>13.2f}{same}",
              flush=True)
    if ray is not None and ray.is_initialized():
        ray.shutdown()


def grade_fingerprint(tasks: list[str]) -> dict[str, object]:
    """Every check result, score and reward of the three baselines over dev and test."""
    from clarus_env.env import make
    from clarus_env.evaluation import run_episode
    from clarus_env.splits import seeds

    out: dict[str, object] = {}
    for task in tasks:
        for split in ("dev", "test"):
            env = make(task, split=split)
            for agent in ("oracle", "heuristic", "random"):
                for s in seeds(split, task):
                    e = run_episode(env, agent, s, 0)
                    out[f"{task}/{split}/{agent}/{s}"] = {
                        "grade": e["grade"], "rewards": e["rewards"], "actions": e["actions"],
                        "cases": e.get("cases")}
    return out


def main() -> None:
    from clarus_env.tasks import TASKS

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--episodes", type=int, default=2000)
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    p.add_argument("--loop", action="store_true",
                   help="time the full user loop (run_episode) per task and agent")
    p.add_argument("--agents", nargs="*", default=["oracle", "heuristic"])
    p.add_argument("--rounds", type=int, default=5, help="--loop: passes over the dev split")
    p.add_argument("--grades", metavar="OUT", help="write the grade fingerprint to OUT")
    p.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"),
                   help="compare two grade fingerprints")
    p.add_argument("--scale", action="store_true",
                   help="clarus eval on 1 process, N processes and a local Ray")
    p.add_argument("--workers", type=int, default=0, help="--scale: N (default: every core)")
    p.add_argument("--split", default="test", help="--scale: the split to run")
    p.add_argument("--trials", type=int, default=4, help="--scale: trials per scenario")
    args = p.parse_args()
    if args.scale:
        bench_scale(args.agents[0], args.tasks, args.split, args.trials, args.workers)
        return
    if args.compare:
        old, new = (json.loads(Path(f).read_text()) for f in args.compare)
        diffs = [k for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]
        for k in diffs[:20]:
            print(f"differs: {k}")
        print(f"{len(diffs)} of {len(old)} episodes differ")
        sys.exit(1 if diffs else 0)
    if args.grades:
        fp = grade_fingerprint(args.tasks)
        Path(args.grades).write_text(json.dumps(fp, sort_keys=True) + "\n")
        print(f"{len(fp)} episodes written to {args.grades}")
        return
    if args.loop:
        print(f"{'task':<26}{'agent':<11}{'episodes/s':>11}{'µs/episode':>12}"
              f"{'CPU µs/ep':>11}{'SQL/episode':>13}  (load {os.getloadavg()[0]:.1f})")
        for task in args.tasks:
            for agent in args.agents:
                rate, us, cpu, sql = bench_loop(task, agent, args.rounds)
                print(f"{task:<26}{agent:<11}{rate:>11,.0f}{us:>12,.0f}{cpu:>11,.0f}"
                      f"{sql:>13.1f}", flush=True)
        return
    for task in args.tasks:
        bench_task(task, args.episodes)


if __name__ == "__main__":
    main()
