"""MCP at ``/mcp`` against a real uvicorn server, driven by the official ``mcp`` SDK client.

The SDK client is the compatibility proof: if its streamable HTTP transport can initialize,
list tools, play whole oracle episodes and read the grade, real MCP agents can too. The raw
HTTP tests pin the JSON-RPC error contract the SDK never exercises (malformed bodies,
missing or unknown sessions, unknown methods).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import httpx2
import pytest

from clarus_env.actions import ACTIONS, CODING_ACTIONS
from clarus_env.scenario_store import load_scenario
from clarus_env.schemas import load
from clarus_env.server.mcp import handle_jsonrpc
from clarus_env.tasks import get_task

from .serverutil import running_server

pytest.importorskip("mcp")

from mcp import Client, ClientSession, MCPError  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

SEED = 1000  # a train seed of every task
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "0"}}}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server() as url:
        yield url


def with_session(base_url: str, body: Callable[[ClientSession], Awaitable[Any]],
                 headers: dict[str, str] | None = None) -> Any:
    """Run ``body`` inside an initialized SDK session (a fresh MCP session each call); the
    harness's scenario choice travels as ``X-Clarus-*`` headers on the SDK's HTTP client."""

    async def main() -> Any:
        async with httpx2.AsyncClient(headers=headers or {}) as http, \
                streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "clarus"
            assert init.capabilities.tools is not None
            return await body(session)

    return asyncio.run(main())


def structured(result: Any) -> dict[str, Any]:
    """The tool result's payload; the text content must carry the same JSON."""
    assert result.content and result.content[0].type == "text"
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def schema_dict(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict):
        return schema
    return schema.model_dump(by_alias=True, exclude_none=True)


# -- the SDK client -----------------------------------------------------------------------
def test_sdk_lists_one_tool_per_action_with_the_published_schemas(base_url: str) -> None:
    async def body(session: ClientSession) -> Any:
        await session.send_ping()
        return (await session.list_tools()).tools

    tools = with_session(base_url, body)
    names = [t.name for t in tools]
    assert len(names) == len(set(names)) == 3 + 19 + 4
    assert {"reset", "state", "grade"} <= set(names)
    assert len(ACTIONS) == 19 and len(CODING_ACTIONS) == 4
    by_name = {t.name: t for t in tools}
    for name in [*ACTIONS, *CODING_ACTIONS]:
        assert schema_dict(by_name[name].input_schema) == load(f"actions/{name}.schema.json"), name
        assert by_name[name].description


def play_oracle(base_url: str, task: str) -> tuple[list[dict[str, Any]], dict[str, Any],
                                                      dict[str, Any]]:
    plan = get_task(task).oracle(load_scenario(task, SEED))

    async def body(session: ClientSession) -> Any:
        early = await session.call_tool(plan[0]["action_type"], plan[0]["parameters"])
        assert early.is_error and "reset" in early.content[0].text
        reset = structured(await session.call_tool("reset", {}))
        assert reset["observation"]["task_name"] == task and reset["done"] is False
        steps = []
        for action in plan:
            res = await session.call_tool(action["action_type"], action["parameters"])
            assert not res.is_error, res.content[0].text
            steps.append(structured(res))
        state = structured(await session.call_tool("state", {}))
        grade = structured(await session.call_tool("grade", {}))
        assert state["episode_id"] == reset["episode_id"] and state["seed"] == SEED
        return steps, state, grade

    return with_session(base_url, body, {"X-Clarus-Task": task, "X-Clarus-Seed": str(SEED)})


def test_sdk_plays_a_deductive_liability_oracle_episode(base_url: str) -> None:
    steps, state, grade = play_oracle(base_url, "deductive_liability")
    assert [s["done"] for s in steps] == [False] * (len(steps) - 1) + [True]
    assert all(s["observation"]["last_action_error"] is None for s in steps)
    g = grade["grade"]
    assert grade["done"] is True and g["passed"] == g["total"] > 0
    assert all(c["passed"] for c in g["checks"])
    assert steps[-1]["info"]["grade"] == g and state["score"] == g["score"] == grade["score"]
    assert state["done"] is True and state["step_count"] == len(steps)


def test_sdk_plays_a_medical_coding_oracle_episode(base_url: str) -> None:
    steps, state, grade = play_oracle(base_url, "medical_coding")
    assert len(steps) == 3 and steps[-1]["done"] is True
    assert all(s["reward"] == 1.0 for s in steps)
    assert grade["score"] == 1.0 == state["score"] and grade["grade"]["passed"] == 3


def test_sdk_tool_errors_and_unknown_tools(base_url: str) -> None:
    async def body(session: ClientSession) -> Any:
        before = await session.call_tool("grade", {})
        bad_reset = await session.call_tool("reset", {"task_name": "nope"})
        await session.call_tool("reset", {"task_name": "medical_coding"})
        wrong_task = await session.call_tool("fetch_eob", {"claim_id": "C1"})
        bad_params = await session.call_tool("search_icd10", {"query": 5})
        not_yet = structured(await session.call_tool("grade", {}))
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("no_such_tool", {})
        return before, bad_reset, wrong_task, bad_params, not_yet, unknown.value

    before, bad_reset, wrong_task, bad_params, not_yet, unknown = with_session(base_url, body)
    assert before.is_error and "reset" in before.content[0].text
    assert bad_reset.is_error and "task_name" in bad_reset.content[0].text
    assert wrong_task.is_error and "medical_coding" in wrong_task.content[0].text
    # A refused action is still a step (as over /step): the error is in the observation.
    assert bad_params.is_error
    assert structured(bad_params)["observation"]["last_action_error"]
    assert not_yet["done"] is False and not_yet["grade"] is None
    assert unknown.code == -32602 and "no_such_tool" in str(unknown)


def test_high_level_client_auto_mode_and_session_termination(base_url: str) -> None:
    """``mcp.Client(url)`` probes ``server/discover`` first; the refusal makes it fall back to
    the initialize handshake. Leaving the client DELETEs the session, closing its episode."""

    async def main() -> tuple[int, dict[str, Any]]:
        async with Client(f"{base_url}/mcp") as client:
            tools = (await client.list_tools()).tools
            await client.call_tool("reset", {"task_name": "medical_coding"})
            return len(tools), structured(await client.call_tool("state", {}))

    n_tools, state = asyncio.run(main())
    assert n_tools == 26 and state["task"] == "medical_coding" and state["step_count"] == 0
    gone = httpx.get(f"{base_url}/state", params={"episode_id": state["episode_id"]})
    assert gone.status_code == 404


def test_the_model_cannot_choose_or_repeat_a_scenario(base_url: str) -> None:
    """Eval hygiene: the tools the model drives take no seed and start one episode per MCP
    session, so an agent cannot re-play a seed it has just seen graded."""

    async def body(session: ClientSession) -> Any:
        seeded = await session.call_tool("reset", {"task_name": "deductive_liability",
                                                   "seed": SEED})
        first = structured(await session.call_tool("reset", {"task_name": "deductive_liability",
                                                             "split": "dev"}))
        again = await session.call_tool("reset", {"task_name": "deductive_liability"})
        return seeded, first, again

    seeded, first, again = with_session(base_url, body)
    assert seeded.is_error and "X-Clarus-Seed" in seeded.content[0].text
    assert first["observation"]["task_name"] == "deductive_liability"
    assert again.is_error and "one episode per MCP session" in again.content[0].text
    schema = next(t for t in asyncio.run(_tools(base_url)) if t.name == "reset")
    assert "seed" not in schema_dict(schema.input_schema)["properties"]


def test_harness_headers_choose_the_scenario_and_are_validated(base_url: str) -> None:
    async def body(session: ClientSession) -> Any:
        wrong = await session.call_tool("reset", {"task_name": "medical_coding"})
        ok = structured(await session.call_tool("reset", {}))
        return wrong, ok, structured(await session.call_tool("state", {}))

    wrong, ok, state = with_session(base_url, body, {"X-Clarus-Task": "abductive_conflict",
                                                     "X-Clarus-Seed": "50003",
                                                     "X-Clarus-Split": "dev"})
    assert wrong.is_error and "abductive_conflict" in wrong.content[0].text
    assert state["task"] == "abductive_conflict" and state["seed"] == 50003
    with httpx.Client(base_url=base_url, timeout=30) as http:
        bad = http.post("/mcp", json=INIT, headers={"X-Clarus-Seed": "-1"})
    assert bad.status_code == 200 and "X-Clarus-Seed" in bad.json()["error"]["message"]
    assert "mcp-session-id" not in bad.headers


async def _tools(base_url: str) -> Any:
    async with streamable_http_client(f"{base_url}/mcp") as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        return (await session.list_tools()).tools


def test_sessions_are_isolated_and_deleted(base_url: str) -> None:
    """Two MCP sessions own two episodes; DELETE ends a session and its episode."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        sids = [http.post("/mcp", json=INIT).headers["mcp-session-id"] for _ in range(2)]
        assert sids[0] != sids[1]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        eids = []
        for sid, task in zip(sids, ("medical_coding", "deductive_liability"), strict=True):
            r = http.post("/mcp", headers={"mcp-session-id": sid},
                          json={**call, "params": {"name": "reset",
                                                   "arguments": {"task_name": task}}})
            eids.append(r.json()["result"]["structuredContent"]["episode_id"])
        states = [http.get("/state", params={"episode_id": e}).json() for e in eids]
        assert [s["task"] for s in states] == ["medical_coding", "deductive_liability"]
        assert http.delete("/mcp", headers={"mcp-session-id": sids[0]}).status_code == 204
        assert http.get("/state", params={"episode_id": eids[0]}).status_code == 404
        gone = http.post("/mcp", headers={"mcp-session-id": sids[0]},
                         json={**call, "params": {"name": "state"}})
        assert gone.status_code == 404 and gone.json()["error"]["code"] == -32001
        assert http.delete("/mcp", headers={"mcp-session-id": sids[0]}).status_code == 404
        assert http.delete("/mcp", headers={"mcp-session-id": sids[1]}).status_code == 204


def test_session_capacity_and_idle_expiry() -> None:
    with running_server(capacity=1, per_client=1, idle_ttl_s=0.3) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        first = http.post("/mcp", json=INIT)
        assert first.status_code == 200
        full = http.post("/mcp", json=INIT)
        assert full.status_code == 503 and full.json()["error"]["code"] == -32000
        time.sleep(0.5)
        again = http.post("/mcp", json=INIT)  # the idle session expired and freed its slot
        assert again.status_code == 200
        stale = http.post("/mcp", headers={"mcp-session-id": first.headers["mcp-session-id"]},
                          json={"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert stale.status_code == 404


# -- raw JSON-RPC over HTTP ---------------------------------------------------------------
@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30,
                      headers={"accept": "application/json, text/event-stream"}) as client:
        yield client


@pytest.fixture(scope="module")
def sid(http: httpx.Client) -> str:
    r = http.post("/mcp", json=INIT)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    result = r.json()["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "clarus" and "tools" in result["capabilities"]
    note = http.post("/mcp", headers={"mcp-session-id": r.headers["mcp-session-id"]},
                     json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202 and note.content == b""
    return r.headers["mcp-session-id"]


def rpc_error(r: httpx.Response, status: int, code: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == code, body
    return body


def test_raw_parse_and_envelope_errors(http: httpx.Client, sid: str) -> None:
    # a body that is not JSON is an HTTP 400; a JSON body that is not a valid JSON-RPC
    # request is a -32600 error in a 200 (OpenEnv's validator posts `{}` and wants 200)
    h = {"mcp-session-id": sid, "content-type": "application/json"}
    assert rpc_error(http.post("/mcp", content=b"{not json", headers=h), 400, -32700)["id"] is None
    rpc_error(http.post("/mcp", content=b"", headers=h), 400, -32700)
    rpc_error(http.post("/mcp", json=[{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
                        headers=h), 200, -32600)
    rpc_error(http.post("/mcp", json="ping", headers=h), 200, -32600)
    rpc_error(http.post("/mcp", json={"id": 1, "method": "ping"}, headers=h), 200, -32600)
    rpc_error(http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": 7}, headers=h),
              200, -32600)
    rpc_error(http.post("/mcp", json={"jsonrpc": "2.0", "id": True, "method": "ping"},
                        headers=h), 200, -32600)


def test_raw_method_and_param_errors(http: httpx.Client, sid: str) -> None:
    h = {"mcp-session-id": sid}
    body = rpc_error(http.post("/mcp", json={"jsonrpc": "2.0", "id": "a", "method": "nope/x"},
                               headers=h), 200, -32601)
    assert body["id"] == "a"
    rpc_error(http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                      "params": {"name": "no_such_tool"}}, headers=h),
              200, -32602)
    rpc_error(http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                      "params": {"name": "reset", "arguments": [1]}},
                        headers=h), 200, -32602)
    rpc_error(http.post("/mcp", json={"jsonrpc": "2.0", "id": 4, "method": "tools/list",
                                      "params": [1]}, headers=h), 200, -32602)
    ok = http.post("/mcp", json={"jsonrpc": "2.0", "id": 5, "method": "ping"}, headers=h)
    assert ok.status_code == 200 and ok.json() == {"jsonrpc": "2.0", "id": 5, "result": {}}


def test_raw_session_and_transport_rules(http: httpx.Client, sid: str) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "state"}}
    rpc_error(http.post("/mcp", json=call), 400, -32600)  # tools/call needs a session
    rpc_error(http.post("/mcp", json=call, headers={"mcp-session-id": "0" * 32}), 404, -32001)
    listed = http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listed.status_code == 200 and len(listed.json()["result"]["tools"]) == 26
    rpc_error(http.post("/mcp", json=call, headers={"mcp-session-id": sid,
                                                    "mcp-protocol-version": "1999-01-01"}),
              400, -32600)
    rpc_error(http.post("/mcp", json=call, headers={"mcp-session-id": sid,
                                                    "accept": "text/html"}), 406, -32600)
    rpc_error(http.post("/mcp", json=call, headers={"mcp-session-id": sid,
                                                    "origin": "http://evil.example"}),
              403, -32600)
    rpc_error(http.get("/mcp", headers={"mcp-session-id": sid}), 405, -32600)
    rpc_error(http.delete("/mcp"), 400, -32600)
    reply = http.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "result": {}},
                      headers={"mcp-session-id": sid})
    assert reply.status_code == 202  # a client response: accepted, nothing to answer


def test_handle_jsonrpc_without_http() -> None:
    """The transport-free core, as the WebSocket route uses it: the env lives in ``ctx``."""
    ctx: dict[str, Any] = {"harness": {"seed": SEED}}  # what initialize's headers would set
    assert handle_jsonrpc({"jsonrpc": "2.0", "method": "notifications/initialized"}, ctx) is None
    early = handle_jsonrpc({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "submit_codes", "arguments": {}}}, ctx)
    assert early["result"]["isError"] is True
    reset = handle_jsonrpc({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "reset", "arguments": {
                                "task_name": "medical_coding"}}}, ctx)
    assert reset["result"]["isError"] is False and ctx["env"].task_name == "medical_coding"
    plan = get_task("medical_coding").oracle(load_scenario("medical_coding", SEED))
    for i, action in enumerate(plan, 3):
        out = handle_jsonrpc({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": action["action_type"], "arguments": action["parameters"]}}, ctx)
    assert out["result"]["structuredContent"]["done"] is True
    grade = handle_jsonrpc({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                            "params": {"name": "grade"}}, ctx)
    assert grade["result"]["structuredContent"]["score"] == 1.0
    assert handle_jsonrpc({"jsonrpc": "2.0", "id": 10, "method": "x"}, ctx)["error"]["code"] \
        == -32601
    assert handle_jsonrpc([], ctx)["error"]["code"] == -32600
