"""Clarus inside a real ``trl.GRPOTrainer``: two optimizer steps on CPU with a tiny model.

The model and tokenizer are built here (``examples/tiny_model.py``: a 2-layer Qwen2 from a
config, a BPE tokenizer fitted to the prompts, TRL's Qwen2.5 chat template), then nudged on a
few of the reference agent's tool calls so that it writes tool calls at all. From then on it
is TRL's own loop: it resets one pooled environment per rollout with the dataset row,
renders the tools with transformers, samples, parses tool calls with its response template,
calls the environment's methods, feeds the results back, and scores each rollout with the
environment's ``get_reward``. A weight-0 reward function records what TRL handed it, and the
checks replay every rollout on a plain environment: the calls the completions show are
exactly the calls the rollout's own environment received, with the same outputs and the same
graded reward — which a mix-up between the environments of one batch would break.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="needs the .[train] extra")

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from clarus_env.env import make  # noqa: E402
from clarus_env.scenario_store import load_scenario  # noqa: E402
from clarus_env.splits import seeds  # noqa: E402
from clarus_env.tasks import get_task  # noqa: E402
from clarus_env.trl_adapter import make_trl_env  # noqa: E402
from examples import train_grpo  # noqa: E402
from examples.tiny_model import tiny_model  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

GROUP = 4  # generations per prompt
PROMPTS_PER_STEP = 2
STEPS = 2
INSTRUCTION = "Work the case with the tools. "


@pytest.fixture(autouse=True)
def one_thread() -> Any:
    """The tiny model's matrices are too small to gain from threads, and on a shared 2-core
    machine two threads contend; restored after the test."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    yield
    torch.set_num_threads(before)


def train_rows(task: str, n: int) -> list[dict[str, Any]]:
    """The first ``n`` train seeds of ``task`` as GRPO rows: ``reset`` receives each row."""
    return [{"prompt": [{"role": "user", "content": INSTRUCTION}], "task_name": task,
             "seed": seed} for seed in list(seeds("train", task))[:n]]


class Recorder:
    """A weight-0 reward function: it changes no advantage, and keeps a copy of what TRL
    passes (the instances are pooled and reset for the next batch, so state is copied)."""

    __name__ = "recorder"

    def __init__(self) -> None:
        self.batches: list[list[dict[str, Any]]] = []

    def __call__(self, prompts: list, completions: list, environments: list,
                 task_name: list, seed: list, **_: Any) -> list[float]:
        self.batches.append([
            {"prompt": p, "completion": c, "env_id": id(e), "env_task": e.task,
             "env_seed": e.seed, "actions": [dict(a) for a in e.actions], "reward": e.reward,
             "score": e.score, "done": e.done, "row_task": t, "row_seed": s}
            for p, c, e, t, s in zip(prompts, completions, environments, task_name, seed,
                                     strict=True)])
        return [0.0] * len(prompts)


def run_grpo(task: str, tmp_path: Any) -> tuple[GRPOTrainer, Recorder]:
    rows = train_rows(task, PROMPTS_PER_STEP * STEPS)
    model, tokenizer = tiny_model(rows, nudge_steps=150)
    recorder = Recorder()
    args = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, seed=0, max_steps=STEPS, logging_steps=1,
        per_device_train_batch_size=GROUP * PROMPTS_PER_STEP, num_generations=GROUP,
        learning_rate=1e-3, max_completion_length=1024, max_tool_calling_iterations=3,
        temperature=1.0, reward_weights=[0.0],  # TRL adds get_reward with weight 1
        save_strategy="no", report_to="none", disable_tqdm=True)
    trainer = GRPOTrainer(model=model, reward_funcs=[recorder], args=args,
                          train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                          environment_factory=make_trl_env(task))
    trainer.train()
    return trainer, recorder


def tool_turns(completion: list[dict[str, Any]]) -> tuple[list[tuple[dict[str, Any], str]],
                                                          list[dict[str, Any]]]:
    """(tool call, tool message content) pairs, in order, from a TRL completion, and the calls
    of the last assistant message left without an answer: TRL stops at its iteration cap
    without calling them, or calls them and then drops the results because they would not
    fit in ``max_completion_length`` (the environment has acted on those)."""
    calls = [call["function"] for m in completion if m["role"] == "assistant"
             for call in m.get("tool_calls") or []]
    results = [m["content"] for m in completion if m["role"] == "tool"]
    unanswered = calls[len(results):]
    assert len(calls) >= len(results), completion
    assert not unanswered or unanswered == [c["function"] for c in completion[-1]["tool_calls"]]
    return list(zip(calls, results, strict=False)), unanswered


def as_action(call: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A parsed tool call as the adapter passes it on (arguments given as null are left out)."""
    return call["name"], {k: v for k, v in call["arguments"].items() if v is not None}


def replay(task: str, seed: int, actions: list[dict[str, Any]]) -> tuple[list[str], float,
                                                                          float | None]:
    """Outputs through a fresh adapter instance, and (return, grade) from the plain env."""
    env = make_trl_env(task)()
    env.reset(task_name=task, seed=seed)
    outputs = [getattr(env, a["action_type"])(**a["parameters"]) for a in actions]
    plain = make(task)
    plain.reset(seed=seed)
    results = [plain.step(a) for a in actions]
    grade = results[-1].info.get("grade") if results and results[-1].done else None
    assert env.score == (None if grade is None else grade["score"])
    return outputs, round(sum(r.reward for r in results), 6), env.score


@pytest.mark.slow
@pytest.mark.parametrize("task", ["deductive_liability", "medical_coding"])
def test_grpo_trains_through_the_environment(task: str, tmp_path: Any) -> None:
    trainer, recorder = run_grpo(task, tmp_path)

    # Both optimizer steps finished, with a loss and TRL's tool metrics logged.
    assert trainer.state.global_step == STEPS
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == STEPS and all(math.isfinite(h["loss"]) for h in logs)
    assert sum(h["tools/call_frequency"] for h in logs) > 0

    assert len(recorder.batches) == STEPS
    env_class = type(make_trl_env(task)()).__name__
    rewards: list[float] = []
    env_calls = 0
    for batch, log in zip(recorder.batches, logs, strict=True):
        assert len(batch) == GROUP * PROMPTS_PER_STEP
        # One environment per rollout, reset with that rollout's own row.
        assert len({r["env_id"] for r in batch}) == len(batch)
        for r in batch:
            assert (r["env_task"], r["env_seed"]) == (r["row_task"], r["row_seed"]) == (
                task, r["row_seed"])
            intro = make_trl_env(task)().reset(task_name=task, seed=r["row_seed"])
            assert r["prompt"][-1]["content"] == INSTRUCTION + intro

            # The tool calls this completion shows reached this environment and no other:
            # the calls that did not fail inside TRL are exactly the environment's actions.
            turns, unanswered = tool_turns(r["completion"])
            played = [(c, out) for c, out in turns if not out.startswith("{'error'")]
            acted = [(a["action_type"], a["parameters"]) for a in r["actions"]]
            assert acted[: len(played)] == [as_action(c) for c, _ in played]
            dropped = acted[len(played):]  # results TRL dropped as too long, if any
            assert all(a in [as_action(c) for c in unanswered] for a in dropped), dropped
            outputs, want_return, want_score = replay(task, r["row_seed"], r["actions"])
            assert [out for _, out in played] == outputs[: len(played)]
            # The reward is the environment's, graded by the plain env's grader.
            assert r["reward"] == pytest.approx(want_return, abs=1e-9)
            assert r["score"] == want_score and (r["score"] is not None) == r["done"]
            env_calls += len(r["actions"])
            rewards.append(r["reward"])
        # What TRL optimised is the environment's reward (get_reward, logged under its class).
        mean = sum(r["reward"] for r in batch) / len(batch)
        assert log[f"rewards/{env_class}/mean"] == pytest.approx(mean, abs=1e-5)

    assert env_calls >= len(rewards) // 2, "most rollouts should have reached the env"
    assert len(set(rewards)) > 1, f"rewards did not vary across generations: {rewards}"
    # Some group's generations scored differently, so GRPO had a non-zero advantage to follow.
    assert any(h["frac_reward_zero_std"] < 1 for h in logs)
    assert any(r["done"] for b in recorder.batches for r in b) or task == "medical_coding"
    if task == "medical_coding":  # submit_codes is graded per note: some rollout submitted
        assert any(a["action_type"] == "submit_codes" for b in recorder.batches for r in b
                   for a in r["actions"])
    json.dumps(trainer.state.log_history)  # the logs are plain numbers


# -- examples/train_grpo.py ---------------------------------------------------------------------
def played(task: str, seed: int, plan: list[dict[str, Any]]) -> Any:
    env = make_trl_env(task)()
    env.reset(seed=seed)
    for a in plan:
        getattr(env, a["action_type"])(**a.get("parameters", {}))
    return env


def test_example_metrics_read_the_grade() -> None:
    task, seed = "deductive_liability", seeds("train", "deductive_liability")[0]
    oracle = played(task, seed, get_task(task).oracle(load_scenario(task, seed)))
    closed = played(task, seed, [{"action_type": "close_case"}])
    running = played(task, seed, [])
    envs = [oracle, closed, running]
    assert train_grpo.outcome_accuracy(envs) == [1.0, 0.0, 0.0]
    assert train_grpo.pass_rate(envs) == [1.0, 0.0, 0.0]
    rows = train_grpo.train_dataset(task, 3)
    assert [r["seed"] for r in rows] == list(seeds("train", task))[:3]
    assert all(r["task_name"] == task for r in rows)


@pytest.mark.slow
def test_example_script_runs_one_tiny_step(tmp_path: Path) -> None:
    """The command the README gives, as a user runs it."""
    proc = subprocess.run([sys.executable, "examples/train_grpo.py", "--tiny",
                           "--output-dir", str(tmp_path)], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("step ")]
    assert len(lines) == 1, proc.stdout[-3000:]
    m = re.fullmatch(r"step 1  reward (-?\d+\.\d{4})  outcome_accuracy (\d\.\d{3})  "
                     r"pass_rate (\d\.\d{3})  tool_calls/rollout (\d+\.\d\d)", lines[0])
    assert m, lines[0]
    assert float(m.group(4)) > 0  # the tiny model's tool calls reached the environment


# -- the OpenEnv path: GenericEnvClient inside a rollout_func, against `clarus serve` ----------
@pytest.fixture()
def clarus_serve() -> Any:
    """A live ``clarus serve`` on a free 127.0.0.1 port, stopped when the test ends."""
    import httpx

    from .serverutil import free_port

    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).with_name("clarus")), "serve", "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"clarus serve exited: {proc.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("clarus serve did not answer /health within 30 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_grpo_with_an_openenv_rollout_func_against_a_live_server(clarus_serve: str,
                                                                  tmp_path: Path) -> None:
    pytest.importorskip("openenv.core.generic_client", reason="needs openenv-core's client")
    from examples.openenv_rollout import OpenEnvRollout, case_rows, env_reward

    task = "deductive_liability"
    rows = case_rows(clarus_serve, task, list(seeds("train", task))[:PROMPTS_PER_STEP])
    # The brief the server gives is the one the in-process adapter gives.
    for row in rows:
        intro = make_trl_env(task)().reset(seed=row["seed"])
        assert row["prompt"][-1]["content"] == intro
    model, tokenizer = tiny_model(rows, with_reset=False)
    rollout = OpenEnvRollout(clarus_serve, task, rows, max_turns=3, max_new_tokens=128)
    args = GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, seed=0, max_steps=1, logging_steps=1,
        per_device_train_batch_size=GROUP * PROMPTS_PER_STEP, num_generations=GROUP,
        learning_rate=1e-3, max_completion_length=2048, temperature=1.0, save_strategy="no",
        report_to="none", disable_tqdm=True)
    trainer = GRPOTrainer(model=model, reward_funcs=[env_reward], args=args,
                          train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                          rollout_func=rollout)
    trainer.train()

    assert trainer.state.global_step == 1
    log = next(h for h in trainer.state.log_history if "loss" in h)
    assert math.isfinite(log["loss"])
    episodes = rollout.episodes
    assert len(episodes) == GROUP * PROMPTS_PER_STEP
    assert len({e["episode_id"] for e in episodes}) == len(episodes)  # one session each
    for seed in {r["seed"] for r in rows}:  # each group played its own case
        assert sum(e["seed"] == seed for e in episodes) == GROUP
    assert sum(len(e["actions"]) for e in episodes) >= len(episodes) // 2
    for e in episodes:
        plain = make(task)
        plain.reset(seed=e["seed"])
        results = [plain.step(a) for a in e["actions"]]
        assert [r.reward for r in results] == pytest.approx(e["rewards"], abs=1e-9)
        if e["done"]:
            assert e["grade"]["score"] == results[-1].info["grade"]["score"]
    assert len({e["env_reward"] for e in episodes}) > 1
    assert log["frac_reward_zero_std"] < 1
    mean = sum(e["env_reward"] for e in episodes) / len(episodes)
    assert log["rewards/env_reward/mean"] == pytest.approx(mean, abs=1e-5)
