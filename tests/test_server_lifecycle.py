"""Serving v2 regressions: the known 500s, all-or-nothing WebSocket steps, explicit episode end
over every transport, one capacity policy with per-client caps, and slow-client timeouts."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from typing import Any

import httpx
import pytest
import websockets

from clarus_env.client import ClarusClient
from clarus_env.splits import seeds

from .serverutil import running_server, server  # noqa: F401

SEED = seeds("train", "deductive_liability")[0]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}}


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws"


def sessions(base: str) -> int:
    return int(httpx.get(f"{base}/health").json()["sessions"])


# -- the three known 500s --------------------------------------------------------------------
def test_step_racing_the_first_reset_of_a_new_id_is_never_a_500(server: str) -> None:  # noqa: F811
    statuses: list[int] = []

    def reset(c: httpx.Client, eid: str) -> None:
        statuses.append(c.post("/reset", json={"episode_id": eid, "seed": SEED}).status_code)

    def step(c: httpx.Client, eid: str) -> None:
        r = c.post("/step", json={"episode_id": eid, "action": {
            "action_type": "authenticate_patient", "parameters": {"patient_id": "x"}}})
        statuses.append(r.status_code)
        if r.status_code == 200:  # a step that won the race played the fresh episode
            statuses.append(r.json()["observation"]["step_number"])

    with httpx.Client(base_url=server, timeout=30) as c:
        for i in range(15):
            eid = f"race-{i}-{time.monotonic_ns()}"
            threads = [threading.Thread(target=reset, args=(c, eid)),
                       *(threading.Thread(target=step, args=(c, eid)) for _ in range(3))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            c.delete(f"/episodes/{eid}")
    assert 200 in statuses and all(s in (1, 2, 3, 200, 404) for s in statuses), statuses


def test_mcp_lone_surrogate_id_and_deep_nesting_are_json_rpc_errors(server: str) -> None:  # noqa: F811
    h = {"content-type": "application/json"}
    with httpx.Client(base_url=server, timeout=30) as c:
        r = c.post("/mcp", content=b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
                   headers=h)
        assert r.status_code == 200, r.text
        assert json.loads(r.text)["id"] == "\ud800"  # echoed, ASCII-escaped
        deep = b"[" * 5000 + b"]" * 5000
        r = c.post("/mcp", content=deep, headers=h)
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700, r.text
        nested = (b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
                  b'"state", "arguments": {"a": ' + b'{"a": ' * 1200 + b"1" + b"}" * 1201
                  + b"}}")
        r = c.post("/mcp", content=nested, headers=h)
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700, r.text
        # HTTP /step: the same shapes are 4xx too
        r = c.post("/step", content=b'{"episode_id": "x", "action": ' + deep + b"}", headers=h)
        assert 400 <= r.status_code < 500, r.text


def test_ws_lone_surrogate_is_refused_whole_and_the_connection_survives(server: str) -> None:  # noqa: F811
    async def scenario() -> None:
        async with websockets.connect(ws_url(server)) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": SEED}}))
            first = json.loads(await ws.recv())["data"]
            case = first["observation"]["case_id"]
            await ws.send(json.dumps({"type": "step", "data": {
                "action_type": "authenticate_patient", "parameters": {"patient_id": case}}}))
            ok = json.loads(await ws.recv())["data"]
            # a valid UTF-8 frame whose JSON holds a lone surrogate escape
            await ws.send('{"type": "step", "data": {"action_type": "write_audit_entry", '
                          '"parameters": {"summary": "\\ud800"}}}')
            bad = json.loads(await ws.recv())
            assert bad["type"] == "error" and "surrogate" in bad["data"]["message"], bad
            await ws.send(json.dumps({"type": "state"}))
            state = json.loads(await ws.recv())["data"]
            assert state["step_count"] == 1  # nothing applied: no step, no budget
            await ws.send(json.dumps({"type": "step", "data": {
                "action_type": "write_audit_entry", "parameters": {"summary": "ok"}}}))
            after = json.loads(await ws.recv())["data"]
            assert after["observation"]["step_number"] == 2
            assert (after["info"]["api_calls_remaining"]
                    == ok["info"]["api_calls_remaining"] - 1)
            # an echo of a lone surrogate in an error reply does not drop the socket either
            await ws.send('{"type": "\\udc00"}')
            assert json.loads(await ws.recv())["type"] == "error"

    asyncio.run(scenario())


# -- small strictness fixes -------------------------------------------------------------------
def test_http_is_as_strict_as_ws_and_mcp(server: str) -> None:  # noqa: F811
    with httpx.Client(base_url=server, timeout=30) as c:
        r = c.post("/reset", json={"seed": True, "episode_id": "strict"})
        assert r.status_code == 422 and r.json()["code"] == "invalid_request", r.text
        r = c.get("/state", params={"episode_id": ""})
        assert r.status_code == 422 and r.json()["code"] == "invalid_request", r.text


# -- explicit episode end ----------------------------------------------------------------------
def test_episodes_end_explicitly_over_every_transport() -> None:
    with running_server(capacity=8, per_client=8) as base, \
            httpx.Client(base_url=base, timeout=30) as c:
        assert c.post("/reset", json={"episode_id": "del-1"}).status_code == 200
        assert c.post("/reset", json={"episode_id": "del-2"}).status_code == 200
        assert sessions(base) == 2
        assert c.delete("/episodes/del-1").status_code == 204
        r = c.post("/close", json={"episode_id": "del-2"})
        assert r.status_code == 204, r.text
        assert sessions(base) == 0
        gone = c.post("/step", json={"episode_id": "del-1", "action": {}})
        assert gone.status_code == 404 and gone.json()["code"] == "unknown_episode"
        again = c.delete("/episodes/del-1")
        assert again.status_code == 404 and again.json()["code"] == "unknown_episode"
        assert c.post("/close", json={}).status_code == 422

        with ClarusClient(base) as client:
            client.reset(seed=SEED)
            assert sessions(base) == 1
        assert sessions(base) == 0  # ClarusClient.close() ended it

        r = c.post("/mcp", json=INIT)
        sid = r.headers["mcp-session-id"]
        h = {"mcp-session-id": sid}
        r = c.post("/mcp", headers=h, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                           "params": {"name": "reset", "arguments": {
                                               "task_name": "deductive_liability"}}})
        assert r.json()["result"]["isError"] is False, r.text
        assert sessions(base) == 1
        assert c.delete("/mcp", headers=h).status_code == 204
        assert sessions(base) == 0

        async def ws_episode() -> None:
            async with websockets.connect(ws_url(base)) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {}}))
                await ws.recv()
                assert sessions(base) == 1

        asyncio.run(ws_episode())
        deadline = time.monotonic() + 10
        while sessions(base) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sessions(base) == 0  # the socket closing ended its episode


# -- one capacity policy -------------------------------------------------------------------
def test_one_capacity_across_transports_and_a_per_client_cap() -> None:
    with running_server(capacity=3, per_client=2) as base, \
            httpx.Client(base_url=base, timeout=30) as c:
        assert c.post("/reset", json={"episode_id": "cap-1"}).status_code == 200
        assert c.post("/reset", json={"episode_id": "cap-2"}).status_code == 200
        r = c.post("/reset", json={"episode_id": "cap-3"})
        assert r.status_code == 429 and r.json()["code"] == "client_capacity_exceeded", r.text

        async def ws_refused() -> dict[str, Any]:
            async with websockets.connect(ws_url(base)) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {}}))
                return json.loads(await ws.recv())

        refused = asyncio.run(ws_refused())
        assert refused["type"] == "error" and refused["data"]["code"] == "CAPACITY_REACHED"
        assert refused["data"]["reason"] == "client_capacity_exceeded"
        assert c.delete("/episodes/cap-2").status_code == 204
        assert c.post("/reset", json={"episode_id": "cap-3"}).status_code == 200


def test_id_less_requests_refuse_to_run_with_several_workers() -> None:
    with running_server(workers=2) as base, httpx.Client(base_url=base, timeout=30) as c:
        r = c.post("/reset", json={})
        assert r.status_code == 400 and r.json()["code"] == "episode_id_required", r.text
        r = c.post("/step", json={"action": {}})
        assert r.status_code == 400 and r.json()["code"] == "episode_id_required", r.text
        assert c.post("/reset", json={"episode_id": "named"}).status_code == 200


# -- slow clients ----------------------------------------------------------------------------
def test_half_sent_requests_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLARUS_HEADER_TIMEOUT_S", "0.5")
    with running_server(http="clarus_env.server.timeouts:HeaderTimeoutProtocol",
                        body_timeout_s=0.5) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\n")  # headers never finish
            assert s.recv(1024) == b""  # closed by the server
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{\"task")
            reply = s.recv(4096)
            assert reply.startswith(b"HTTP/1.1 408"), reply
            assert b"body_timeout" in reply
        assert httpx.get(f"{base}/health").status_code == 200
