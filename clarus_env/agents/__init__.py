"""Baseline agents: oracle (privileged), heuristic (observations only), random."""

from __future__ import annotations

from typing import Any

AGENTS = ("oracle", "heuristic", "random")


def make_agent(name: str, task: str, *, seed: int = 0) -> Any:
    """An agent for ``task``; ``seed`` drives any randomness the agent has."""
    if name == "oracle":
        from .oracle import OracleAgent

        return OracleAgent(task)
    if name == "heuristic":
        import importlib

        module = importlib.import_module(f"clarus_env.tasks.{task}.heuristic")
        return module.HeuristicAgent()
    if name == "random":
        from .random_agent import RandomAgent, RandomCodingAgent

        if task == "medical_coding":
            return RandomCodingAgent(task, seed=seed)
        return RandomAgent(task, seed=seed)
    raise KeyError(f"unknown agent {name!r}; agents: {', '.join(AGENTS)}")
