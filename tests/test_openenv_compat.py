"""OpenEnv as its users meet it: ``openenv validate --url``, ``MCPToolClient`` playing a full
episode over the WebSocket, the final grade reaching plain ``GenericEnvClient`` users, and WS
error messages that say what was wrong (openenv-core 0.3.0, installed for tests only)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import websockets

from clarus_env.scenario_store import load_scenario
from clarus_env.splits import seeds
from clarus_env.tasks import get_task

from .serverutil import running_server


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server() as url:
        yield url


def test_openenv_validate_url_passes_every_check(base_url: str) -> None:
    exe = os.path.join(os.path.dirname(sys.executable), "openenv")
    if not os.path.exists(exe):
        pytest.skip("openenv-core's CLI is not installed (make bootstrap installs it)")
    done = subprocess.run([exe, "validate", "--url", base_url, "--timeout", "30"],
                          capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["summary"]["passed_count"] == report["summary"]["total_count"] == 6, failed
    assert report["passed"] is True and done.returncode == 0


@pytest.mark.parametrize("task", ["deductive_liability", "medical_coding"])
def test_mcp_tool_client_plays_a_full_episode(base_url: str, task: str) -> None:
    mcp_client = pytest.importorskip("openenv.core.mcp_client",
                                     reason="openenv-core's MCP client is not importable")
    seed = seeds("train", task)[2]
    plan = get_task(task).oracle(load_scenario(task, seed))

    async def play() -> tuple[list[Any], list[Any], Any]:
        async with mcp_client.MCPToolClient(base_url=base_url) as env:
            await env.reset(task_name=task, seed=seed)
            tools = await env.list_tools()
            results = [await env.call_tool(a["action_type"], **a["parameters"]) for a in plan]
            grade = await env.call_tool("grade")
            return tools, results, grade

    tools, results, grade = asyncio.run(asyncio.wait_for(play(), timeout=60))
    names = {t.name for t in tools}
    assert {a["action_type"] for a in plan} <= names and {"state", "grade"} <= names
    assert [r["observation"]["step_number"] for r in results] == list(range(1, len(plan) + 1))
    assert all(r["observation"]["last_action_error"] is None for r in results)
    assert results[-1]["done"] is True
    assert grade["done"] is True and grade["grade"] == results[-1]["info"]["grade"]
    assert grade["score"] == results[-1]["info"]["grade"]["score"]


def test_mcp_tool_client_reports_unknown_tools(base_url: str) -> None:
    mcp_client = pytest.importorskip("openenv.core.mcp_client")

    async def call() -> None:
        async with mcp_client.MCPToolClient(base_url=base_url) as env:
            await env.reset()
            with pytest.raises(RuntimeError, match="unknown tool"):
                await env.call_tool("no_such_tool")

    asyncio.run(asyncio.wait_for(call(), timeout=60))


def test_generic_env_client_users_read_the_final_grade_from_state(base_url: str) -> None:
    generic = pytest.importorskip("openenv.core.generic_client")
    task = "abductive_conflict"
    seed = seeds("train", task)[0]
    plan = get_task(task).oracle(load_scenario(task, seed))

    async def play() -> dict[str, Any]:
        async with generic.GenericEnvClient(base_url=base_url) as env:
            await env.reset(task_name=task, seed=seed)
            for action in plan:
                last = await env.step(action)
            assert last.done is True
            return await env.state()

    state = asyncio.run(asyncio.wait_for(play(), timeout=60))
    assert state["done"] is True and state["grade"]["score"] == state["score"]
    assert state["grade"]["passed"] == state["grade"]["total"]


def test_ws_errors_name_what_was_wrong_and_where(base_url: str) -> None:
    async def talk() -> list[dict[str, Any]]:
        out = []
        async with websockets.connect(base_url.replace("http://", "ws://") + "/ws") as ws:
            for message in ({"type": "reset", "data": {"seed": "seven"}},
                            {"type": "reset", "data": {"task_name": "chess"}},
                            {"type": "step"},
                            {"type": "teleport"},
                            {"type": "step", "data": {"action_type": "close_case"}}):
                await ws.send(json.dumps(message))
                out.append(json.loads(await ws.recv())["data"])
        return out

    seed, task, missing, unknown, early = asyncio.run(asyncio.wait_for(talk(), timeout=30))
    assert seed["code"] == "VALIDATION_ERROR"
    assert seed["message"].startswith("Invalid reset message: data.seed:"), seed
    assert "chess" in task["message"] and "deductive_liability" in task["message"], task
    assert missing["message"].startswith("Invalid step message: data: Field required"), missing
    assert unknown["code"] == "UNKNOWN_TYPE" and "reset" in unknown["message"], unknown
    assert early["code"] == "EXECUTION_ERROR" and "reset" in early["message"], early
