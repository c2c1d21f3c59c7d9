"""Serving speed: p50/p90 round-trip µs of one ``step`` over HTTP (keep-alive) and over the
OpenEnv WebSocket ``/ws``, read against a trivial echo environment served by openenv-core's
own ``create_app`` on the same machine, under the same uvicorn settings and the same clients.

Ours steps play real oracle episodes (so each figure includes the env's own work, printed
alongside as the in-process ``env.step`` p50); theirs echo a short message. The ratio is
ours / theirs: below 1.0 means our step round trip is faster than OpenEnv's reference server
doing nothing. Figures only, no assertions: timing is the reader's to judge.

Run: ``.venv/bin/python benchmarks/server.py [--steps N] [--task TASK]`` (each server runs in
its own uvicorn subprocess on a free 127.0.0.1 port; the client runs in this process).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WARMUP = 50
UVICORN = {"host": "127.0.0.1", "log_level": "warning", "access_log": False}


# -- the reference: a trivial echo environment on openenv-core's create_app ----------------
def echo_app() -> Any:
    """OpenEnv's own server around an env whose step does nothing but echo the message."""
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State

    class EchoAction(Action):
        message: str = ""

    class EchoObservation(Observation):
        echoed: str = ""

    class EchoEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State(episode_id=uuid.uuid4().hex, step_count=0)

        def reset(self, seed: int | None = None, episode_id: str | None = None,
                  **kwargs: Any) -> EchoObservation:
            self._state = State(episode_id=episode_id or uuid.uuid4().hex, step_count=0)
            return EchoObservation(echoed="", reward=0.0, done=False)

        def step(self, action: EchoAction, timeout_s: float | None = None,
                 **kwargs: Any) -> EchoObservation:
            self._state.step_count += 1
            return EchoObservation(echoed=action.message, reward=0.0, done=False)

        @property
        def state(self) -> State:
            return self._state

    return create_app(EchoEnvironment, EchoAction, EchoObservation, env_name="echo",
                      max_concurrent_envs=8)


def serve(which: str, port: int) -> None:
    import uvicorn

    if which == "echo":
        os.environ.setdefault("ENABLE_WEB_INTERFACE", "false")
        uvicorn.run(echo_app(), port=port, **UVICORN)
    else:
        from clarus_env.server.app import create_app

        uvicorn.run(create_app(), port=port, **UVICORN)


# -- plumbing ------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(which: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", which, "--port", str(port)],
                            cwd=REPO)
    url = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the {which} server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError(f"the {which} server did not come up within 60 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pct(samples: list[float], q: float) -> float:
    """The q-quantile of ``samples`` (seconds) in µs."""
    return statistics.quantiles(samples, n=100, method="inclusive")[round(q * 100) - 1] * 1e6


def timed(n: int, one: Callable[[], Any]) -> list[float]:
    """Run ``one`` WARMUP + n times; the durations of the last n."""
    out = []
    for i in range(WARMUP + n):
        t = time.perf_counter()
        one()
        if i >= WARMUP:
            out.append(time.perf_counter() - t)
    return out


# -- what a step is, for us ------------------------------------------------------------------
def oracle_actions(task: str, seeds: range) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    from clarus_env.scenario_store import load_scenario
    from clarus_env.tasks import get_task

    while True:
        for seed in seeds:
            yield seed, list(get_task(task).oracle(load_scenario(task, seed)))


class OracleStepper:
    """Calls ``send_step`` with the next oracle action, resetting (untimed: outside
    ``step``) via ``send_reset`` whenever an episode ends."""

    def __init__(self, task: str, send_reset: Callable[[int], None],
                 send_step: Callable[[dict[str, Any]], bool]) -> None:
        self.episodes = oracle_actions(task, range(1001, 1021))
        self.send_reset, self.send_step = send_reset, send_step
        self.pending: list[dict[str, Any]] = []

    def prepare(self) -> None:
        if not self.pending:
            seed, self.pending = next(self.episodes)
            self.send_reset(seed)

    def step(self) -> None:
        if self.send_step(self.pending.pop(0)):
            self.pending = []


def run_timed_steps(stepper: OracleStepper, n: int) -> list[float]:
    out = []
    for i in range(WARMUP + n):
        stepper.prepare()
        t = time.perf_counter()
        stepper.step()
        if i >= WARMUP:
            out.append(time.perf_counter() - t)
    return out


def inprocess(task: str, n: int) -> list[float]:
    import clarus_env

    env = clarus_env.make(task)

    def reset(seed: int) -> None:
        env.reset(seed=seed)

    def step(action: dict[str, Any]) -> bool:
        return env.step(action).done

    return run_timed_steps(OracleStepper(task, reset, step), n)


def ours_http(url: str, task: str, n: int) -> list[float]:
    import httpx

    with httpx.Client(base_url=url, timeout=30) as c:
        eid = ""

        def reset(seed: int) -> None:
            nonlocal eid
            eid = c.post("/reset", json={"task_name": task, "seed": seed}).json()["episode_id"]

        def step(action: dict[str, Any]) -> bool:
            r = c.post("/step", json={"episode_id": eid, "action": action})
            return bool(r.json()["done"])

        return run_timed_steps(OracleStepper(task, reset, step), n)


def ws_connect(url: str) -> Any:
    from websockets.sync.client import connect

    return connect(url.replace("http://", "ws://") + "/ws", max_size=None, open_timeout=10)


def ws_close(ws: Any) -> None:
    """OpenEnv's polite goodbye: the server ends the episode and closes the socket."""
    ws.send(json.dumps({"type": "close"}))
    try:
        ws.recv(timeout=5)
    except Exception:  # the close frame ends the recv: nothing else is expected
        return


def ws_call(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    return json.loads(ws.recv(timeout=30))


def ours_ws_available(url: str) -> str | None:
    """None if /ws speaks OpenEnv's protocol, else why not."""
    try:
        with ws_connect(url) as ws:
            reply = ws_call(ws, {"type": "reset", "data": {"task_name": "deductive_liability",
                                                          "seed": 1001}})
    except Exception as exc:  # a missing route, a refused upgrade, a timeout
        return f"{type(exc).__name__}: {exc}"
    if reply.get("type") != "observation" or "observation" not in reply.get("data", {}):
        return f"reset replied {json.dumps(reply)[:200]}"
    return None


def ours_ws(url: str, task: str, n: int) -> list[float]:
    with ws_connect(url) as ws:
        def reset(seed: int) -> None:
            reply = ws_call(ws, {"type": "reset", "data": {"task_name": task, "seed": seed}})
            assert reply["type"] == "observation", reply

        def step(action: dict[str, Any]) -> bool:
            reply = ws_call(ws, {"type": "step", "data": action})
            assert reply["type"] == "observation", reply
            return bool(reply["data"]["done"])

        out = run_timed_steps(OracleStepper(task, reset, step), n)
        ws_close(ws)
        return out


def echo_http(url: str, n: int) -> list[float]:
    import httpx

    with httpx.Client(base_url=url, timeout=30) as c:
        def one() -> None:
            r = c.post("/step", json={"action": {"message": "hello"}})
            assert r.status_code == 200, r.text

        return timed(n, one)


def echo_ws(url: str, n: int) -> list[float]:
    with ws_connect(url) as ws:
        assert ws_call(ws, {"type": "reset", "data": {}})["type"] == "observation"

        def one() -> None:
            reply = ws_call(ws, {"type": "step", "data": {"message": "hello"}})
            assert reply["type"] == "observation", reply

        out = timed(n, one)
        ws_close(ws)
        return out


# -- report ----------------------------------------------------------------------------------
def row(label: str, ours: list[float] | None, theirs: list[float] | None) -> None:
    def cell(s: list[float] | None) -> str:
        return f"{pct(s, 0.5):>9.0f} {pct(s, 0.9):>9.0f}" if s else f"{'—':>9} {'—':>9}"

    ratio = ""
    if ours and theirs:
        ratio = (f"{pct(ours, 0.5) / pct(theirs, 0.5):>8.2f}x "
                 f"{pct(ours, 0.9) / pct(theirs, 0.9):>8.2f}x")
    print(f"{label:<22} {cell(ours)}   {cell(theirs)}   {ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=2000, help="timed steps per figure")
    ap.add_argument("--task", default="deductive_liability")
    ap.add_argument("--serve", choices=["clarus", "echo"], help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return

    import openenv  # noqa: F401  (fail early and clearly if openenv-core is absent)

    env_step = inprocess(args.task, args.steps)
    ours_proc, ours_url = start("clarus")
    try:
        theirs_proc, theirs_url = start("echo")
    except BaseException:
        stop(ours_proc)
        raise
    try:
        http_ours = ours_http(ours_url, args.task, args.steps)
        http_theirs = echo_http(theirs_url, args.steps)
        why_not = ours_ws_available(ours_url)
        ws_ours = ours_ws(ours_url, args.task, args.steps) if why_not is None else None
        ws_theirs = echo_ws(theirs_url, args.steps)
    finally:
        stop(ours_proc)
        stop(theirs_proc)

    print(f"step round trip, µs ({args.steps} steps after {WARMUP} warm-up; ours = "
          f"{args.task} oracle episodes, theirs = openenv-core create_app echo env; "
          f"{os.cpu_count()} CPUs)")
    print(f"{'':<22} {'ours p50':>9} {'ours p90':>9}   {'echo p50':>9} {'echo p90':>9}   "
          f"{'ratio p50':>9} {'ratio p90':>9}")
    row("HTTP /step keep-alive", http_ours, http_theirs)
    row("WebSocket /ws step", ws_ours, ws_theirs)
    print(f"{'in-process env.step':<22} {pct(env_step, 0.5):>9.0f} {pct(env_step, 0.9):>9.0f}"
          "   (the env's own work inside each of ours)")
    if why_not is not None:
        print(f"note: our /ws was skipped, it does not speak OpenEnv's protocol yet ({why_not})")


if __name__ == "__main__":
    main()
