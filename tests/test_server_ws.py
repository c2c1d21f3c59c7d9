"""The ``/ws`` OpenEnv protocol, proved over real sockets against a real uvicorn server.

Full episodes go through openenv-core's own ``GenericEnvClient`` (its sync wrapper), so what
passes here is what an OpenEnv user gets; malformed traffic goes through a raw ``websockets``
connection, because the client never sends it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

import clarus_env
from clarus_env.scenario_store import load_scenario
from clarus_env.server import mcp as mcp_module
from clarus_env.server.ws import MAX_MESSAGE_BYTES
from clarus_env.splits import seeds
from clarus_env.tasks import get_task

from .serverutil import running_server


def _openenv_client() -> Any:
    """openenv-core's client module; its package imports fastmcp (``fastmcp-slim[client]``)."""
    return pytest.importorskip("openenv.core.generic_client",
                               reason="openenv-core's client is not importable (it needs "
                                      "openenv-core and fastmcp-slim[client])")


def info_client(base_url: str) -> Any:
    """A ``GenericEnvClient`` that also keeps each reply's payload and ``info`` (the grade).

    ``_parse_result`` is the client's documented hook for reading a server's payload; the
    StepResult it returns is the parent's, untouched.
    """
    generic = _openenv_client().GenericEnvClient

    class InfoClient(generic):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.infos: list[dict[str, Any]] = []
            self.payloads: list[dict[str, Any]] = []

        def _parse_result(self, payload: dict[str, Any]) -> Any:
            self.payloads.append(payload)
            self.infos.append(payload.get("info") or {})
            return super()._parse_result(payload)

    return InfoClient(base_url=base_url)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server() as url:
        yield url


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout=30))


async def ask(ws: ClientConnection, message: Any) -> dict[str, Any]:
    await ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    return json.loads(await ws.recv())


def assert_error(reply: dict[str, Any], code: str) -> dict[str, Any]:
    assert reply["type"] == "error", reply
    assert set(reply["data"]) >= {"message", "code"}
    assert reply["data"]["code"] == code, reply
    assert isinstance(reply["data"]["message"], str) and reply["data"]["message"]
    return reply["data"]


# -- full episodes through OpenEnv's client ----------------------------------------------------
@pytest.mark.parametrize("task", clarus_env.TASKS)
def test_oracle_episode_through_openenv_client(base_url: str, task: str) -> None:
    seed = seeds("train", task)[0]
    scenario = load_scenario(task, seed)
    plan = get_task(task).oracle(scenario)
    client = info_client(base_url)
    with client.sync() as env:
        first = env.reset(task_name=task, seed=seed)
        assert first.done is False and first.reward == 0.0
        assert first.observation["task_name"] == task
        assert first.observation["step_number"] == 0
        episode_id = client.payloads[-1]["episode_id"]
        results = [env.step(action) for action in plan]
        state = env.state()

    for i, res in enumerate(results):
        assert isinstance(res.reward, float), res
        assert res.observation["last_action_error"] is None, (i, res.observation)
        assert res.observation["last_action_type"] == plan[i]["action_type"]
        assert res.done is (i == len(results) - 1)
        assert res.observation["done"] is res.done
    grade = client.infos[-1]["grade"]
    if task == "medical_coding":
        assert grade["score"] == 1.0, grade
    else:
        assert grade["passed"] == grade["total"] == len(grade["checks"]), grade
        assert all(c["passed"] for c in grade["checks"]), grade
    # GenericEnvClient drops `info`: its users read the final grade from state()
    assert state == {"episode_id": episode_id, "task": task, "seed": seed,
                     "step_count": len(plan), "done": True, "score": grade["score"],
                     "grade": grade}
    assert all(p["episode_id"] == episode_id for p in client.payloads)
    # the answer key never leaves the server
    wire = json.dumps(client.payloads) + json.dumps(state)
    assert '"expected"' not in wire


def test_openenv_client_raises_server_errors_and_keeps_the_connection(base_url: str) -> None:
    client = _openenv_client().GenericEnvClient(base_url=base_url)
    with client.sync() as env:
        with pytest.raises(RuntimeError, match="EXECUTION_ERROR"):
            env.step({"action_type": "authenticate_patient", "parameters": {}})
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.reset(task_name="no_such_task")
        res = env.reset(seed=seeds("train", "deductive_liability")[0])  # default task
        assert res.observation["task_name"] == "deductive_liability"
        bad = env.step({"action_type": "no_such_action", "parameters": {}})
        assert bad.done is False and bad.reward < 0
        assert bad.observation["last_action_error"]
        assert env.state()["step_count"] == 1


def test_async_client_and_custom_episode_id(base_url: str) -> None:
    async def play() -> tuple[Any, Any, dict[str, Any]]:
        async with _openenv_client().GenericEnvClient(base_url=base_url) as env:
            first = await env.reset(task_name="medical_coding", seed=seeds("train",
                                                                            "medical_coding")[0],
                                    episode_id="my-episode-1")
            # switching task on the same connection replaces the episode
            second = await env.reset(task_name="abductive_conflict", split="dev")
            return first, second, await env.state()

    first, second, state = run(play())
    assert first.observation["task_name"] == "medical_coding"
    assert second.observation["task_name"] == "abductive_conflict"
    assert state["task"] == "abductive_conflict" and state["step_count"] == 0
    assert state["seed"] in seeds("dev", "abductive_conflict")
    assert state["episode_id"] != "my-episode-1"


# -- malformed traffic over a raw socket ------------------------------------------------------
def test_malformed_messages_get_error_replies_and_the_connection_survives(base_url: str
                                                                          ) -> None:
    async def scenario() -> None:
        async with connect(ws_url(base_url), max_size=None) as ws:
            assert_error(await ask(ws, "this is not json"), "INVALID_JSON")
            assert_error(await ask(ws, "{\"type\": \"reset\""), "INVALID_JSON")
            assert_error(await ask(ws, "[" * 100_000), "INVALID_JSON")  # too deep to parse
            assert_error(await ask(ws, b"\xff\xfe\x00"), "INVALID_JSON")  # binary, not UTF-8
            assert_error(await ask(ws, "[1, 2]"), "VALIDATION_ERROR")
            assert_error(await ask(ws, "null"), "VALIDATION_ERROR")
            assert_error(await ask(ws, {"type": "teleport"}), "UNKNOWN_TYPE")
            assert_error(await ask(ws, {"data": {}}), "UNKNOWN_TYPE")  # no type at all
            assert_error(await ask(ws, {"type": 7}), "UNKNOWN_TYPE")
            err = assert_error(await ask(ws, {"type": "x" * 10_000}), "UNKNOWN_TYPE")
            assert len(err["message"]) < 200  # never echo a huge value back
            missing = assert_error(await ask(ws, {"type": "step"}), "VALIDATION_ERROR")
            assert missing["errors"][0]["loc"] == ["data"]
            assert_error(await ask(ws, {"type": "step", "data": "authenticate"}),
                         "VALIDATION_ERROR")
            assert_error(await ask(ws, {"type": "state", "data": {}}), "VALIDATION_ERROR")
            assert_error(await ask(ws, {"type": "mcp"}), "VALIDATION_ERROR")
            # before any reset
            assert_error(await ask(ws, {"type": "step", "data": {"action_type": "close_case",
                                                                  "parameters": {}}}),
                         "EXECUTION_ERROR")
            assert_error(await ask(ws, {"type": "state"}), "EXECUTION_ERROR")
            # bad reset options
            for data in ({"task_name": "nope"}, {"seed": -1}, {"seed": "12"}, {"seed": True},
                         {"seed": 2**64}, {"split": "holdout"}, {"episode_id": ""},
                         {"task": "medical_coding"}, {"task_name": ["x"]}):
                err = assert_error(await ask(ws, {"type": "reset", "data": data}),
                                   "VALIDATION_ERROR")
                assert err["errors"], data
            # a frame over the limit is refused, not fatal
            huge = json.dumps({"type": "step", "data": {"action_type": "x",
                                                        "parameters": {"p": "y" * (2 *
                                                                       MAX_MESSAGE_BYTES)}}})
            err = assert_error(await ask(ws, huge), "VALIDATION_ERROR")
            assert "limit" in err["message"]

            # the same connection still plays an episode
            seed = seeds("train", "deductive_liability")[0]
            reset = await ask(ws, {"type": "reset", "data": {"seed": seed}})
            assert reset["type"] == "observation"
            assert set(reset["data"]) == {"episode_id", "observation", "reward", "done", "info"}
            assert reset["data"]["reward"] == 0.0 and reset["data"]["done"] is False
            # a well-formed message with a bad action is the env's call: a penalised step
            for action in ({"action_type": "no_such_action"}, {"parameters": {}},
                           {"action_type": "fetch_eob", "parameters": {"claim_id": 5}}):
                obs = await ask(ws, {"type": "step", "data": action})
                assert obs["type"] == "observation", obs
                assert obs["data"]["reward"] < 0 and obs["data"]["done"] is False
                assert obs["data"]["observation"]["last_action_error"]
            # binary frames carrying JSON are read like text frames
            state = await ask(ws, json.dumps({"type": "state"}).encode())
            assert state["type"] == "state" and state["data"]["step_count"] == 3
            # close: no reply, a normal closure
            await ws.send(json.dumps({"type": "close"}))
            with pytest.raises(ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1000

    run(scenario())
    health = httpx.get(f"{base_url}/health", timeout=5)
    assert health.status_code == 200 and health.json()["status"] == "healthy"


def test_each_connection_has_its_own_episode(base_url: str) -> None:
    async def scenario() -> None:
        async with connect(ws_url(base_url)) as a, connect(ws_url(base_url)) as b:
            ra = await ask(a, {"type": "reset", "data": {"task_name": "medical_coding"}})
            rb = await ask(b, {"type": "reset", "data": {"task_name": "adversarial_fabrication",
                                                         "episode_id": "ep-b"}})
            assert rb["data"]["episode_id"] == "ep-b"
            await ask(b, {"type": "step", "data": {"action_type": "no_such_action"}})
            sa, sb = await ask(a, {"type": "state"}), await ask(b, {"type": "state"})
            assert sa["data"]["task"] == "medical_coding" and sa["data"]["step_count"] == 0
            assert sa["data"]["episode_id"] == ra["data"]["episode_id"]
            assert sb["data"] == {**sb["data"], "task": "adversarial_fabrication",
                                  "episode_id": "ep-b", "step_count": 1}

    run(scenario())


def test_client_vanishing_mid_episode_does_not_hurt_the_server(base_url: str) -> None:
    async def scenario() -> None:
        ws = await connect(ws_url(base_url))
        await ask(ws, {"type": "reset", "data": {}})
        await ws.send(json.dumps({"type": "step", "data": {"action_type": "no_such_action"}}))
        ws.transport.abort()  # no close handshake, reply unread
        async with connect(ws_url(base_url)) as again:
            assert (await ask(again, {"type": "reset", "data": {}}))["type"] == "observation"

    run(scenario())
    assert httpx.get(f"{base_url}/health", timeout=5).status_code == 200


# -- MCP over the socket --------------------------------------------------------------------
def test_mcp_messages(base_url: str) -> None:
    supported = hasattr(mcp_module, "handle_jsonrpc")

    async def scenario() -> None:
        async with connect(ws_url(base_url)) as ws:
            listed = await ask(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1,
                                                            "method": "tools/list"}})
            assert listed["type"] == "mcp" and listed["data"]["jsonrpc"] == "2.0"
            assert listed["data"]["id"] == 1
            if not supported:
                assert listed["data"]["error"]["code"] == -32603
                return
            names = {t["name"] for t in listed["data"]["result"]["tools"]}
            assert {"reset", "state"} <= names
            bad = await ask(ws, {"type": "mcp", "data": {"id": 2, "method": "tools/list"}})
            assert bad["type"] == "mcp" and bad["data"]["error"]["code"] == -32600
            # an MCP tool call acts on this connection's episode
            reset = await ask(ws, {"type": "reset", "data": {"task_name": "medical_coding"}})
            called = await ask(ws, {"type": "mcp", "data": {
                "jsonrpc": "2.0", "id": "s", "method": "tools/call",
                "params": {"name": "state", "arguments": {}}}})
            st = called["data"]["result"]["structuredContent"]
            assert st["episode_id"] == reset["data"]["episode_id"]
            assert st["task"] == "medical_coding"
            # the model's reset tool cannot replace the episode the harness started
            refused = await ask(ws, {"type": "mcp", "data": {
                "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "reset", "arguments": {"task_name": "abductive_conflict"}}}})
            assert refused["data"]["result"]["isError"] is True
            state = await ask(ws, {"type": "state"})
            assert state["data"]["task"] == "medical_coding"
        async with connect(ws_url(base_url)) as ws:
            # and the other way round: an episode MCP starts is the one `state` reports
            await ask(ws, {"type": "mcp", "data": {
                "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "reset", "arguments": {"task_name": "abductive_conflict"}}}})
            state = await ask(ws, {"type": "state"})
            assert state["data"]["task"] == "abductive_conflict"
            # a notification gets no reply; the next request still does
            await ws.send(json.dumps({"type": "mcp", "data": {
                "jsonrpc": "2.0", "method": "notifications/initialized"}}))
            pong = await ask(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 4,
                                                          "method": "ping"}})
            assert pong["data"]["id"] == 4 and "result" in pong["data"]

    run(scenario())


# -- limits ----------------------------------------------------------------------------------
def test_capacity_and_idle_timeout() -> None:
    async def scenario(url: str) -> None:
        async with connect(ws_url(url)) as first:
            assert (await ask(first, {"type": "reset", "data": {}}))["type"] == "observation"
            async with connect(ws_url(url)) as second:
                err = assert_error(json.loads(await second.recv()), "CAPACITY_REACHED")
                assert err["max_sessions"] == 1 and err["active_sessions"] == 1
                with pytest.raises(ConnectionClosed):
                    await second.recv()
                assert second.close_code == 1013
            # the idle connection is told why, then closed
            assert_error(json.loads(await first.recv()), "SESSION_ERROR")
            with pytest.raises(ConnectionClosed):
                await first.recv()
        async with connect(ws_url(url)) as third:  # the slot is free again
            assert (await ask(third, {"type": "reset", "data": {}}))["type"] == "observation"

    with running_server(capacity=1, per_client=1, idle_ttl_s=1.0) as url:
        run(scenario(url))


# -- the OpenEnv manifest ------------------------------------------------------------------------
def test_openenv_manifest_matches_the_server() -> None:
    import importlib
    from pathlib import Path

    import yaml
    from fastapi import FastAPI

    from clarus_env.server.app import task_metadata

    repo = Path(__file__).resolve().parents[1]
    manifest = yaml.safe_load((repo / "openenv.yaml").read_text())
    assert manifest["spec_version"] == 1 and manifest["name"] == "clarus"
    assert (manifest["type"], manifest["runtime"], manifest["port"]) == ("space", "fastapi", 7860)
    module, _, attr = manifest["app"].partition(":")
    assert isinstance(getattr(importlib.import_module(module), attr), FastAPI)
    assert manifest["version"] == clarus_env.__version__
    assert manifest["reset"]["task_name"]["choices"] == list(clarus_env.TASKS)
    keys = ("name", "kind", "difficulty", "checks", "api_call_budget")
    assert [{k: t[k] for k in keys} for t in manifest["tasks"]] == \
        [{k: t[k] for k in keys} for t in task_metadata()]
    for where in [manifest, *manifest["tasks"]]:
        for key in ("action_schema", "observation_schema"):
            if key in where:
                assert (repo / where[key]).is_file(), where[key]
