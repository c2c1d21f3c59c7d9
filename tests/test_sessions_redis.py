"""The Redis session store: episodes shared by workers, rebuilt by replaying their action log.

Two ``SessionManager`` objects on one Redis play the part of two workers (each with its own
cache of live envs); the end-to-end test runs ``clarus serve --workers 2`` for real.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets
from websockets.sync.client import connect as ws_connect

from clarus_env.env import make
from clarus_env.scenario_store import load_scenario
from clarus_env.server.sessions import RedisStore, SessionError, SessionManager
from clarus_env.splits import seeds
from clarus_env.tasks import get_task

from .serverutil import clarus_serve

pytestmark = pytest.mark.usefixtures("redis_url")


def oracle(task: str, seed: int) -> list[dict[str, Any]]:
    return get_task(task).oracle(load_scenario(task, seed))


def in_process_grade(task: str, seed: int, actions: list[dict[str, Any]]) -> dict[str, Any]:
    env = make(task, split="train")
    try:
        env.reset(seed=seed)
        grade = None
        for a in actions:
            grade = env.step(a).info.get("grade", grade)
        return grade
    finally:
        env.close()


def workers(redis_url: str, n: int = 2, capacity: int = 64, per_client: int = 64,
            ttl: float = 600.0) -> list[SessionManager]:
    prefix = f"t{uuid.uuid4().hex[:8]}:"  # each test its own keyspace
    return [SessionManager(capacity, ttl, per_client,
                           RedisStore(redis_url, capacity, per_client, ttl, prefix=prefix), 2)
            for _ in range(n)]


@pytest.mark.parametrize("task", ["deductive_liability", "medical_coding"])
def test_steps_alternate_between_workers_and_grade_like_one_process(redis_url: str,
                                                                    task: str) -> None:
    a, b = workers(redis_url)
    seed = seeds("train", task)[1]
    plan = oracle(task, seed)
    key, first = a.reset(task, seed, "train", "ep-" + task)
    assert first["task_name"] == task
    results = []
    for i, action in enumerate(plan):
        # b has never seen the episode: it replays the log; a's cache is then stale and the
        # version check makes it replay too, so no step is ever applied to an old env
        results.append((a if i % 2 else b).step(key, action))
    assert [r["observation"]["step_number"] for r in results] == list(range(1, len(plan) + 1))
    assert results[-1]["done"] is True
    assert results[-1]["info"]["grade"] == in_process_grade(task, seed, plan)
    for w in (a, b):
        st = w.state(key, with_grade=True)
        assert st["step_count"] == len(plan) and st["done"] is True
        assert st["grade"] == results[-1]["info"]["grade"]


def test_rejected_actions_are_all_or_nothing_across_workers(redis_url: str) -> None:
    a, b = workers(redis_url)
    key, _ = a.reset("deductive_liability", None, None, "aon")
    with pytest.raises(SessionError) as exc:
        a.step(key, {"action_type": "write_audit_entry", "parameters": {"summary": "\ud800"}})
    assert exc.value.code == "invalid_action"
    assert b.state(key)["step_count"] == 0
    b.step(key, {"action_type": "write_audit_entry", "parameters": {"summary": "ok"}})
    assert a.state(key)["step_count"] == 1


def test_close_on_one_worker_ends_the_episode_on_all(redis_url: str) -> None:
    a, b = workers(redis_url)
    key, _ = a.reset("deductive_liability", None, None, "closing")
    b.step(key, {"action_type": "write_audit_entry", "parameters": {"summary": "x"}})
    assert b.close(key) is True
    for w in (a, b):
        with pytest.raises(SessionError) as exc:
            w.step(key, {"action_type": "write_audit_entry", "parameters": {"summary": "y"}})
        assert exc.value.code == "unknown_episode"
    assert a.close(key) is False


def test_capacity_per_client_caps_and_eviction_hold_across_workers(redis_url: str) -> None:
    a, b = workers(redis_url, capacity=3, per_client=2)
    a.reset("deductive_liability", None, None, "c1", client="10.0.0.1")
    b.reset("deductive_liability", None, None, "c2", client="10.0.0.1")
    with pytest.raises(SessionError) as exc:
        a.reset("deductive_liability", None, None, "c3", client="10.0.0.1")
    assert exc.value.code == "client_capacity_exceeded" and exc.value.status == 429
    b.reset("deductive_liability", None, None, "c4", client="10.0.0.2")
    assert len(a) == len(b) == 3
    with pytest.raises(SessionError) as exc:
        b.reset("deductive_liability", None, None, "c5", client="10.0.0.3")
    assert exc.value.code == "capacity_exceeded" and exc.value.status == 503
    # a finished episode makes room
    seed = seeds("train", "deductive_liability")[0]
    b.reset("deductive_liability", seed, None, "c4", client="10.0.0.2")
    for action in oracle("deductive_liability", seed):
        a.step("c4", action)
    b.reset("deductive_liability", None, None, "c5", client="10.0.0.3")
    with pytest.raises(SessionError):
        a.state("c4")


def test_idle_episodes_expire_in_the_shared_store(redis_url: str) -> None:
    import time

    a, b = workers(redis_url, ttl=1.0)
    a.reset("deductive_liability", None, None, "idle")
    time.sleep(2.2)
    with pytest.raises(SessionError) as exc:
        b.state("idle")
    assert exc.value.code == "unknown_episode"


def test_id_less_requests_are_refused_on_a_shared_store(redis_url: str) -> None:
    (a,) = workers(redis_url, n=1)
    with pytest.raises(SessionError) as exc:
        a.reset("deductive_liability", None, None, None)
    assert exc.value.code == "episode_id_required"


def test_store_down_is_a_503_not_a_500() -> None:
    from .serverutil import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", 4, 4, 60.0)
    manager = SessionManager(4, 60.0, 4, store, 1)
    with pytest.raises(SessionError) as exc:
        manager.reset("deductive_liability", None, None, "x")
    assert exc.value.code == "store_unavailable" and exc.value.status == 503


# -- `clarus serve --workers 2`: the acceptance run -----------------------------------------
class Flaky(Exception):
    """The connection broke (its worker was killed): retry on whichever worker answers."""


def _children(pid: int) -> list[int]:
    """uvicorn's worker processes (not multiprocessing's resource tracker)."""
    out: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            out += [int(x) for x in f.read().split()]
    workers = []
    for child in out:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"resource_tracker" not in cmd:
            workers.append(child)
    return workers


@contextlib.contextmanager
def two_workers(store: str, workers: int = 2) -> Iterator[tuple[subprocess.Popen, str]]:
    with clarus_serve("--workers", str(workers), "--store", store, "--max-sessions", "512",
                      "--max-sessions-per-client", "512") as (proc, base):
        deadline = time.monotonic() + 60
        while len(_children(proc.pid)) < workers and time.monotonic() < deadline:
            time.sleep(0.1)
        yield proc, base


def _retry(fn: Any, tries: int = 100) -> Any:
    for _ in range(tries):
        try:
            return fn()
        except (httpx.TransportError, OSError, websockets.exceptions.WebSocketException, Flaky):
            time.sleep(0.05)
    raise AssertionError("the server never came back")


class HttpPlayer:
    def __init__(self, base: str) -> None:
        self.c = httpx.Client(base_url=base, timeout=30)

    def reset(self, eid: str, task: str, seed: int) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            r = self.c.post("/reset", json={"task_name": task, "seed": seed, "episode_id": eid})
            assert r.status_code == 200, r.text
            return r.json()
        return _retry(go)

    def state(self, eid: str) -> dict[str, Any]:
        r = self.c.get("/state", params={"episode_id": eid, "include": "grade"})
        assert r.status_code == 200, r.text
        return r.json()

    def step(self, eid: str, action: dict[str, Any]) -> dict[str, Any]:
        r = self.c.post("/step", json={"episode_id": eid, "action": action})
        assert r.status_code == 200, r.text
        return r.json()

    def close(self, eid: str) -> None:
        _retry(lambda: self.c.delete(f"/episodes/{eid}"))


class WsPlayer:
    def __init__(self, base: str) -> None:
        self.url = base.replace("http://", "ws://") + "/ws"
        self.ws: Any = None

    def _send(self, message: dict[str, Any], eid: str | None = None) -> dict[str, Any]:
        try:
            if self.ws is None:
                self.ws = ws_connect(self.url, open_timeout=10, legacy=True)
                if eid is not None:  # a new socket: take the episode over again
                    self.ws.send(json.dumps({"type": "attach", "data": {"episode_id": eid}}))
                    reply = json.loads(self.ws.recv(timeout=30))
                    if reply["type"] == "error":
                        raise AssertionError(reply)
            self.ws.send(json.dumps(message))
            reply = json.loads(self.ws.recv(timeout=30))
        except (websockets.exceptions.WebSocketException, OSError, TimeoutError):
            self.ws = None
            raise Flaky from None
        assert reply["type"] != "error", reply
        return reply["data"]

    def reset(self, eid: str, task: str, seed: int) -> dict[str, Any]:
        return _retry(lambda: self._send({"type": "reset", "data": {
            "task_name": task, "seed": seed, "episode_id": eid}}))

    def state(self, eid: str) -> dict[str, Any]:
        return self._send({"type": "state"}, eid)

    def step(self, eid: str, action: dict[str, Any]) -> dict[str, Any]:
        return self._send({"type": "step", "data": action}, eid)

    def close(self, eid: str) -> None:
        if self.ws is not None:
            self.ws.close()
            self.ws = None


class McpPlayer:
    def __init__(self, base: str) -> None:
        self.c = httpx.Client(base_url=base, timeout=30)
        self.sid = ""

    def _call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        r = self.c.post("/mcp", headers={"mcp-session-id": self.sid}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": args}})
        assert r.status_code == 200, r.text
        result = r.json()["result"]
        assert not result["isError"] or "observation" in result["structuredContent"], result
        return result["structuredContent"]

    def reset(self, eid: str, task: str, seed: int) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            r = self.c.post("/mcp", headers={"x-clarus-task": task, "x-clarus-seed": str(seed)},
                            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                                "protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "0"}}})
            assert r.status_code == 200, r.text
            self.sid = r.headers["mcp-session-id"]
            return self._call("reset", {"task_name": task})
        return _retry(go)

    def state(self, eid: str) -> dict[str, Any]:
        st = self._call("state", {})
        if st["done"]:
            st["grade"] = self._call("grade", {})["grade"]
        return st

    def step(self, eid: str, action: dict[str, Any]) -> dict[str, Any]:
        return self._call(action["action_type"], action["parameters"])

    def close(self, eid: str) -> None:
        _retry(lambda: self.c.delete("/mcp", headers={"mcp-session-id": self.sid}))


def play(player: Any, eid: str, task: str, seed: int, plan: list[dict[str, Any]],
         progress: list[int]) -> dict[str, Any]:
    """One oracle episode; a step whose answer was lost is checked against the episode's
    state before it is sent again (it may have been applied and logged already)."""
    first = player.reset(eid, task, seed)
    assert first.get("episode_id", eid) in (eid, None) or player.__class__ is McpPlayer
    grade = None
    for n, action in enumerate(plan):
        try:
            out = player.step(eid, action)
        except (httpx.TransportError, OSError, Flaky):
            st = _retry(lambda: player.state(eid))
            if st["step_count"] == n:  # not applied: send it again
                out = _retry(lambda a=action: player.step(eid, a))
            else:
                assert st["step_count"] == n + 1, (st, n)
                out = {"observation": {"step_number": n + 1}, "done": st["done"],
                       "info": {"grade": st.get("grade")} if st["done"] else {}}
        assert out["observation"]["step_number"] == n + 1, (eid, n, out)  # no mix-up
        progress.append(1)
        if out["done"]:
            grade = out["info"]["grade"]
    player.close(eid)
    return grade


def test_two_workers_64_clients_http_ws_mcp_with_a_worker_killed(redis_url: str) -> None:
    import redis

    store = redis_url.rsplit("/", 1)[0] + "/1"
    redis.Redis.from_url(store).flushdb()
    tasks = ["deductive_liability", "abductive_conflict", "adversarial_fabrication",
             "medical_coding"]
    episodes_per_client = 2
    jobs = []
    for i in range(64):
        kind = (HttpPlayer, WsPlayer, McpPlayer)[i % 3]
        for e in range(episodes_per_client):
            task = tasks[(i + e) % 4]
            seed = seeds("train", task)[(i * episodes_per_client + e) % 40]
            jobs.append((i, kind, task, seed))
    expected = {(t, s): in_process_grade(t, s, oracle(t, s)) for _, _, t, s in jobs}
    plans = {(t, s): oracle(t, s) for _, _, t, s in jobs}
    total_steps = sum(len(plans[(t, s)]) for _, _, t, s in jobs)
    progress: list[int] = []
    failures: list[str] = []
    grades: dict[tuple[int, int], tuple[Any, Any]] = {}

    with two_workers(store) as (proc, base):
        def client(i: int) -> None:
            mine = [j for j in jobs if j[0] == i]
            player = mine[0][1](base)
            try:
                for e, (_, _, task, seed) in enumerate(mine):
                    eid = f"c{i}-e{e}-{uuid.uuid4().hex}"
                    got = play(player, eid, task, seed, plans[(task, seed)], progress)
                    grades[(i, e)] = (got, expected[(task, seed)])
            except BaseException as exc:  # collected: the main thread asserts on them
                failures.append(f"client {i} ({player.__class__.__name__}): {exc!r}"[:500])

        threads = [threading.Thread(target=client, args=(i,)) for i in range(64)]
        for t in threads:
            t.start()
        while len(progress) < total_steps // 3 and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        victims = _children(proc.pid)
        assert len(victims) == 2, victims
        os.kill(victims[0], signal.SIGKILL)  # mid-run: its episodes go on on the other worker
        killed_at = len(progress)
        for t in threads:
            t.join(300)
    assert not failures, failures[:5]
    assert 0 < killed_at < total_steps
    assert len(grades) == len(jobs)
    mismatched = [k for k, (got, want) in grades.items() if got != want]
    assert not mismatched, mismatched[:5]


def test_serve_refuses_several_workers_without_a_shared_store() -> None:
    exe = os.path.join(os.path.dirname(sys.executable), "clarus")
    env = {k: v for k, v in os.environ.items() if k != "CLARUS_SESSION_STORE"}
    done = subprocess.run([exe, "serve", "--workers", "2", "--port", "1"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "shared session store" in done.stderr, done.stderr
