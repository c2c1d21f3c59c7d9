"""No 5xx, ever: hypothesis-generated traffic over every request shape the server takes.

Each example is a batch: HTTP requests sent concurrently (arbitrary JSON, unicode, lone
surrogate escapes, deep nesting, wrong types, racing resets and steps of one id, MCP
envelopes with and without a session) and WebSocket text frames on one long-lived connection
(arbitrary JSON and fuzzed envelopes of every message type). The server is a real
``clarus serve`` in its own process. Every HTTP answer must be < 500 and JSON; every text frame
must get a reply on a connection that stays open. At least 10,000 requests in all.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .serverutil import clarus_serve

pytestmark = pytest.mark.slow

TARGET = 10_000
PATHS = ["/reset", "/step", "/state", "/close", "/mcp", "/health", "/metadata", "/schema",
         "/episodes/fz-1", "/episodes/", "/ws", "/nope"]
ACTIONS = ["authenticate_patient", "fetch_claim_record", "write_diagnosis", "close_case",
           "search_icd10", "submit_codes", "draft_resolution", "get_icd10"]
MCP_METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "nope"]
TOOLS = ["reset", "state", "grade", *ACTIONS, "nope"]

text = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", "\u0000", "é", "🙂", "x" * 300, "deductive_liability", "medical_coding", "fz-1"])
scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(
    allow_nan=False, allow_infinity=False) | text
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(text, inner, max_size=4), max_leaves=12)
ids = st.sampled_from(["fz-1", "fz-2", "", "x" * 200]) | text


def envelope_http() -> st.SearchStrategy[tuple[str, str, bytes]]:
    """(method, path, body) tuples, mostly shaped like real requests."""
    reset = st.fixed_dictionaries({}, optional={
        "task_name": st.sampled_from(["deductive_liability", "medical_coding", "chess"]) | text,
        "seed": st.integers(-5, 2**64) | st.booleans() | text, "split": text,
        "episode_id": ids, "junk": json_values})
    step = st.fixed_dictionaries({"episode_id": ids}, optional={
        "action": st.fixed_dictionaries({"action_type": st.sampled_from(ACTIONS) | text},
                                        optional={"parameters": json_values}) | json_values})
    rpc = st.fixed_dictionaries({"jsonrpc": st.sampled_from(["2.0", "1.0"]) | json_values},
                                optional={"id": st.integers() | text | json_values,
                                          "method": st.sampled_from(MCP_METHODS) | json_values,
                                          "params": st.fixed_dictionaries(
                                              {"name": st.sampled_from(TOOLS)},
                                              optional={"arguments": json_values})
                                          | json_values})
    bodies = st.one_of(
        st.tuples(st.just("POST"), st.just("/reset"), reset.map(_dumps)),
        st.tuples(st.just("POST"), st.just("/step"), step.map(_dumps)),
        st.tuples(st.just("POST"), st.just("/mcp"), rpc.map(_dumps)),
        st.tuples(st.just("POST"), st.just("/close"), st.fixed_dictionaries(
            {"episode_id": ids}).map(_dumps)),
        st.tuples(st.sampled_from(["POST", "GET", "DELETE", "PUT"]), st.sampled_from(PATHS),
                  json_values.map(_dumps)),
        st.tuples(st.sampled_from(["POST"]), st.sampled_from(["/step", "/reset", "/mcp"]),
                  st.sampled_from(_nasty())),
        st.tuples(st.just("GET"), st.builds(
            lambda e: "/state?episode_id=" + quote(e.encode("utf-8", "surrogatepass")), ids),
            st.just(b"")),
    )
    return bodies


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _nasty() -> list[bytes]:
    deep = b"[" * 3000 + b"]" * 3000
    return [deep, b'{"a":' * 2000 + b"1" + b"}" * 2000, b'{"episode_id": "\\ud800"}',
            b'{"jsonrpc": "2.0", "id": "\\udfff", "method": "ping"}',
            b'{"episode_id": "fz-1", "action": {"action_type": "write_audit_entry", '
            b'"parameters": {"summary": "\\ud800"}}}', b"\xff\xfe", b"{", b"", b"null",
            b'{"task_name": "\\udc00"}', b"1e999", b'{"seed": 1e400}']


def envelope_ws() -> st.SearchStrategy[str]:
    kinds = st.sampled_from(["reset", "step", "state", "mcp", "attach"]) | text
    message = st.fixed_dictionaries({"type": kinds}, optional={"data": json_values})
    return st.one_of(message.map(lambda m: json.dumps(m, ensure_ascii=False)),
                     json_values.map(json.dumps),
                     st.sampled_from(['{"type": "step", "data": {"action_type": "x", '
                                      '"parameters": {"s": "\\ud800"}}}', "[" * 3000,
                                      '{"type": "\\udc00"}', "", "not json",
                                      '{"type": "step", "data": {"type": "call_tool", '
                                      '"tool_name": "state", "arguments": []}}',
                                      '{"type": "step", "data": {"type": "list_tools"}}']))


class Counter:
    http = 0
    ws = 0
    statuses: dict[int, int] = {}


async def _http_batch(client: httpx.AsyncClient, batch: list[tuple[str, str, bytes]],
                      sid: str) -> None:
    async def one(method: str, path: str, body: bytes) -> None:
        headers = {"content-type": "application/json"}
        if path == "/mcp" and sid:
            headers["mcp-session-id"] = sid
        r = await client.request(method, path, content=body if method != "GET" else None,
                                 headers=headers)
        Counter.http += 1
        Counter.statuses[r.status_code] = Counter.statuses.get(r.status_code, 0) + 1
        assert r.status_code < 500, (method, path, body[:200], r.status_code, r.text[:300])
        if r.content:
            assert isinstance(json.loads(r.content), dict | list), r.text[:200]

    # racing resets and steps of one id alongside the fuzz
    race = [("POST", "/reset", b'{"episode_id": "fz-1"}'),
            ("POST", "/step", b'{"episode_id": "fz-1", "action": {"action_type": '
                              b'"write_audit_entry", "parameters": {"summary": "s"}}}')]
    await asyncio.gather(*(one(*req) for req in batch + race))


async def _ws_batch(ws: Any, frames: list[str]) -> None:
    for frame in frames:
        await ws.send(frame)
        reply = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
        Counter.ws += 1
        assert reply["type"] in ("observation", "state", "mcp", "error"), reply


def test_fuzzed_traffic_never_gets_a_5xx_or_a_dropped_connection() -> None:
    # capacity high enough that fuzzed resets never meet the documented 503 capacity_exceeded
    with clarus_serve("--max-sessions", "3000", "--max-sessions-per-client", "3000") as (_, base):
        loop = asyncio.new_event_loop()
        client = httpx.AsyncClient(base_url=base, timeout=60,
                                   limits=httpx.Limits(max_connections=16, keepalive_expiry=2))
        init = loop.run_until_complete(client.post("/mcp", json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}}}))
        sid = init.headers["mcp-session-id"]
        ws = loop.run_until_complete(websockets.connect(
            base.replace("http://", "ws://") + "/ws", max_size=2**24))

        @settings(max_examples=420, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.lists(envelope_http(), min_size=12, max_size=12),
               st.lists(envelope_ws(), min_size=10, max_size=10))
        def batch(http: list[tuple[str, str, bytes]], frames: list[str]) -> None:
            async def both() -> None:
                await asyncio.gather(_http_batch(client, http, sid), _ws_batch(ws, frames))

            loop.run_until_complete(both())

        try:
            batch()
            assert ws.state is websockets.protocol.State.OPEN  # never dropped
        finally:
            loop.run_until_complete(ws.close())
            loop.run_until_complete(client.aclose())
            loop.close()
    assert Counter.http + Counter.ws >= TARGET, (Counter.http, Counter.ws)
    assert all(code < 500 for code in Counter.statuses), Counter.statuses
