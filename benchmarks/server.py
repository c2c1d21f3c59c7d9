"""Serving speed: p50/p90 round-trip µs of one ``step`` over HTTP (keep-alive) and over the
OpenEnv WebSocket ``/ws``, read against a trivial echo environment served by openenv-core's
own ``create_app`` on the same machine, under the same uvicorn settings and the same clients.

Ours steps play real oracle episodes (so each figure includes the env's own work, printed
alongside as the in-process ``env.step`` p50); theirs echo a short message. The ratio is
ours / theirs: below 1.0 means our step round trip is faster than OpenEnv's reference server
doing nothing. Figures only, no assertions: timing is the reader's to judge.

Run: ``.venv/bin/python benchmarks/server.py [--steps N] [--task TASK]`` (each server runs in
its own uvicorn subprocess on a free 127.0.0.1 port; the client runs in this process).

Load mode (``--load``): N concurrent clients (``--clients 1,16,64,256``) each play
``--episodes`` oracle episodes (20 by default) over HTTP and over the WebSocket, against
``clarus serve`` with 1 worker (in-process store), 1 worker on Redis and 2 workers on Redis
(a private ``redis-server`` on a free port), and the same load against openenv-core's echo env
on its own ``create_app`` (an episode there is a reset and as many echo steps as ours has).
``--instructions`` runs each single-process server under callgrind instead and prints its
user-space instructions per request over the load (after a warm-up round) and ours/echo: a
figure the machine's load does not move (the kernel's socket work is not in it; valgrind makes
the servers ~50x slower, so use few clients: ``--clients 8 --episodes 2``).
``--rounds R`` runs every row R times, the servers alternating (A B, B A, ...), and prints the
median of the rounds' ours/echo ratios: on a machine others are loading, one round's ratio
swings with their load. Printed per row: episodes/s, steps/s, server CPU per request (the
server processes' user+sys time over the run / requests), the load generator's own CPU per
request (it shares the cores: bigger replies cost it more), reset and step p50/p99 in ms, the
1-minute load average at the end of the row, and ours/echo steps/s. The load generator is one
asyncio loop in this process, on the same cores as the servers; it encodes and decodes WS
messages with orjson and ends each socket with OpenEnv's ``close`` message, for both servers
alike.
"""

from __future__ import annotations

import argparse
import contextlib
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
# as `clarus serve` runs it (no permessage-deflate), for both servers alike
UVICORN = {"host": "127.0.0.1", "log_level": "warning", "access_log": False,
           "ws_per_message_deflate": False}


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
                      max_concurrent_envs=int(os.environ.get("ECHO_MAX_ENVS", 8)))


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


# -- load mode -------------------------------------------------------------------------------
def _cpu_s(pid: int) -> float:
    """user+sys CPU seconds of ``pid`` and its live children (uvicorn's workers)."""
    def one(p: int) -> float:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return 0.0

    total = one(pid)
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                total += sum(one(int(c)) for c in f.read().split())
    except OSError:
        pass
    return total


class Tally:
    def __init__(self) -> None:
        self.reset: list[float] = []
        self.step: list[float] = []
        self.episodes = 0
        self.errors = 0


async def _load_http(url: str, plans: list[list[dict[str, Any]]], seeds: list[int], task: str,
                     episodes: int, tally: Tally, echo: bool) -> None:
    import httpx

    eid = uuid.uuid4().hex
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        for e in range(episodes):
            plan, seed = plans[e % len(plans)], seeds[e % len(seeds)]
            t = time.perf_counter()
            body = {} if echo else {"task_name": task, "seed": seed, "episode_id": eid}
            r = await c.post("/reset", json=body)
            tally.reset.append(time.perf_counter() - t)
            tally.errors += r.status_code != 200
            for action in plan:
                t = time.perf_counter()
                r = await c.post("/step", json={"action": {"message": "hello"}} if echo
                                 else {"episode_id": eid, "action": action})
                tally.step.append(time.perf_counter() - t)
                tally.errors += r.status_code != 200
            tally.episodes += 1
        if not echo:
            await c.delete(f"/episodes/{eid}")


async def _load_ws(url: str, plans: list[list[dict[str, Any]]], seeds: list[int], task: str,
                   episodes: int, tally: Tally, echo: bool) -> None:
    import orjson
    from websockets.asyncio.client import connect

    async with connect(url.replace("http://", "ws://") + "/ws", max_size=None,
                       open_timeout=60) as ws:
        async def call(message: dict[str, Any]) -> dict[str, Any]:
            # orjson both ways, for either server: the generator shares the cores, so its
            # own JSON work should be as cheap as it can be (stdlib json.loads of our 1-5 KB
            # replies cost it ~20 µs each, more than a tenth of what it measures)
            await ws.send(orjson.dumps(message).decode())
            return orjson.loads(await ws.recv())  # type: ignore[no-any-return]

        for e in range(episodes):
            plan, seed = plans[e % len(plans)], seeds[e % len(seeds)]
            t = time.perf_counter()
            reply = await call({"type": "reset", "data": {} if echo else
                                {"task_name": task, "seed": seed}})
            tally.reset.append(time.perf_counter() - t)
            tally.errors += reply.get("type") != "observation"
            for action in plan:
                t = time.perf_counter()
                reply = await call({"type": "step", "data": {"message": "hello"} if echo
                                    else action})
                tally.step.append(time.perf_counter() - t)
                tally.errors += reply.get("type") != "observation"
            tally.episodes += 1
        # OpenEnv's goodbye, to either server: without it openenv-core's endpoint logs a
        # traceback per socket (a closed socket it still tries to close), billed to echo
        await ws.send('{"type":"close"}')
        with contextlib.suppress(Exception):
            await ws.recv()


def load_run(url: str, pid: int, transport: str, clients: int, episodes: int, task: str,
             echo: bool) -> dict[str, float]:
    import asyncio

    from clarus_env.scenario_store import load_scenario
    from clarus_env.splits import seeds as split_seeds
    from clarus_env.tasks import get_task

    seeds = list(split_seeds("train", task)[:20])
    plans = [list(get_task(task).oracle(load_scenario(task, s))) for s in seeds]
    tally = Tally()
    play = _load_http if transport == "HTTP" else _load_ws

    async def everyone() -> None:
        await asyncio.gather(*(play(url, plans[i % 20:] + plans[:i % 20],
                                    seeds[i % 20:] + seeds[:i % 20], task, episodes, tally,
                                    echo) for i in range(clients)))

    cpu0, t0, mine0 = _cpu_s(pid), time.perf_counter(), time.process_time()
    asyncio.run(everyone())
    wall, cpu = time.perf_counter() - t0, _cpu_s(pid) - cpu0
    mine = time.process_time() - mine0
    requests = len(tally.reset) + len(tally.step)

    def q(xs: list[float], p: int) -> float:
        return statistics.quantiles(xs, n=100, method="inclusive")[p - 1] * 1e3 if len(xs) > 1 \
            else (xs[0] * 1e3 if xs else float("nan"))

    return {"episodes/s": tally.episodes / wall, "steps/s": len(tally.step) / wall,
            "cpu_us": cpu / requests * 1e6, "client_us": mine / requests * 1e6,
            "load": os.getloadavg()[0], "reset50": q(tally.reset, 50),
            "reset99": q(tally.reset, 99), "step50": q(tally.step, 50),
            "step99": q(tally.step, 99), "errors": tally.errors, "requests": requests}


def _start_cmd(cmd: list[str], url: str, env: dict[str, str] | None = None,
               within_s: float = 90) -> subprocess.Popen[bytes]:
    import httpx

    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL if cmd[0] == "valgrind" else None)
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{cmd[:3]} exited with {proc.returncode}")
        try:
            health = httpx.get(url + "/health", timeout=1)
            if health.status_code == 200 and health.json().get("warm", True):
                time.sleep(2.0)  # other workers finish warming too (each warms its own)
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    stop(proc)
    raise RuntimeError(f"{cmd[:3]} did not come up within {within_s:g} s")


def _redis() -> tuple[subprocess.Popen[bytes] | None, str]:
    import shutil

    exe = shutil.which("redis-server")
    if exe is None:
        return None, ""
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc, f"redis://127.0.0.1:{port}/0"


def _callgrind_total(path: Path) -> int:
    """The instruction total of one callgrind dump."""
    import re

    text = path.read_text(errors="replace")
    found = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if found is None:
        raise RuntimeError(f"no instruction total in {path}")
    return int(found.group(1))


def instructions_main(args: argparse.Namespace,
                      configs: list[tuple[str, list[str], bool]], cap: str) -> None:
    """Each single-process server under callgrind: user-space instructions per request over a
    load run (after a warm-up round), which the machine's load does not change, unlike time.
    The kernel's socket work, alike for both servers, is not counted."""
    import shutil
    import tempfile

    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("note: --instructions needs valgrind (apt-get install valgrind)")
        return
    transports = args.transports.split(",")
    clients = [int(x) for x in args.clients.split(",")]
    print(f"server user-space instructions per request (callgrind; {args.episodes} "
          f"{args.task} episodes per client after a warm-up round)")
    per: dict[tuple[str, str, int], float] = {}
    for name, cmd, echo in configs:
        if "--workers" in cmd:
            print(f"  {name}: skipped (callgrind follows one process)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            exe = cmd if echo else [sys.executable, *cmd]  # the clarus script, by python
            proc = _start_cmd(["valgrind", "--tool=callgrind", "--dump-instr=no",
                               f"--callgrind-out-file={tmp}/cg.%p", *exe, "--port", str(port),
                               *([] if echo else ["--log-level", "warning"])],
                              url, {**os.environ, "ECHO_MAX_ENVS": cap}, within_s=1800)
            try:
                for transport in transports:
                    for n in clients:
                        load_run(url, proc.pid, transport, n, 1, args.task, echo)  # warm-up
                        subprocess.run(["callgrind_control", "-z", str(proc.pid)],
                                       check=True, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                        r = load_run(url, proc.pid, transport, n, args.episodes, args.task,
                                     echo)
                        before = set(Path(tmp).glob("cg.*"))
                        subprocess.run(["callgrind_control", "-d", str(proc.pid)],
                                       check=True, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                        dumps = sorted(set(Path(tmp).glob("cg.*")) - before)
                        total = sum(_callgrind_total(d) for d in dumps)
                        per[(name, transport, n)] = total / r["requests"]
                        print(f"  {name:<24}{transport:<5}N={n:<4} {r['requests']:>7.0f} "
                              f"requests  {total / r['requests'] / 1e3:>8.0f}k instructions "
                              f"per request  err {r['errors']:.0f}", flush=True)
            finally:
                stop(proc)
    for name, _, echo in configs:
        for transport in transports:
            for n in clients:
                ref = per.get(("openenv echo", transport, n))
                mine = per.get((name, transport, n))
                if not echo and ref and mine:
                    print(f"  {name} / echo instructions per request ({transport}, N={n}): "
                          f"{mine / ref:.2f}x (below 1.0: less work per request than echo)")


def load_main(args: argparse.Namespace) -> None:
    clients = [int(x) for x in args.clients.split(",")]
    clarus = os.path.join(os.path.dirname(sys.executable), "clarus")
    cap = str(max(clients) * 2)
    redis_proc, redis_url = _redis()
    configs: list[tuple[str, list[str], bool]] = [
        ("clarus 1 worker", [clarus, "serve", "--max-sessions", cap,
                             "--max-sessions-per-client", cap], False)]
    if redis_url:
        configs += [("clarus 1 worker redis", [clarus, "serve", "--store", redis_url,
                                               "--max-sessions", cap,
                                               "--max-sessions-per-client", cap], False),
                    ("clarus 2 workers redis", [clarus, "serve", "--workers", "2", "--store",
                                                redis_url, "--max-sessions", cap,
                                                "--max-sessions-per-client", cap], False)]
    else:
        print("note: redis-server not installed: the Redis rows are skipped")
    configs.append(("openenv echo", [sys.executable, __file__, "--serve", "echo"], True))
    if args.servers:  # e.g. "clarus 1 worker,openenv echo"
        wanted = {x.strip() for x in args.servers.split(",")}
        configs = [c for c in configs if c[0] in wanted]
    if args.instructions:
        try:
            instructions_main(args, configs, cap)
        finally:
            if redis_proc is not None:
                stop(redis_proc)
        return
    results: dict[tuple[str, str, int], list[dict[str, float]]] = {}
    print(f"load: {args.episodes} {args.task} episodes per client; {os.cpu_count()} CPUs; "
          f"{args.rounds} round(s); load average before {os.getloadavg()[0]:.2f}")
    print(f"{'server':<24}{'via':<5}{'N':>4} {'ep/s':>8} {'steps/s':>8} {'CPU µs/req':>10} "
          f"{'client µs':>9} {'reset p50':>9} {'p99':>8} {'step p50':>9} {'p99':>8} {'err':>4} "
          f"{'load':>5}")
    try:
        for round_ in range(args.rounds):
            # every other round in reverse order, so a load that rises or falls during the
            # run weighs on each server alike (A B, B A, ...)
            for name, cmd, echo in (configs if round_ % 2 == 0 else configs[::-1]):
                port = free_port()
                url = f"http://127.0.0.1:{port}"
                env = {**os.environ, "ECHO_MAX_ENVS": cap}
                proc = _start_cmd([*cmd, "--port", str(port)] + ([] if echo else
                                                                  ["--log-level", "warning"]),
                                  url, env)
                try:
                    for transport in args.transports.split(","):
                        for n in clients:
                            r = load_run(url, proc.pid, transport, n, args.episodes,
                                         args.task, echo)
                            results.setdefault((name, transport, n), []).append(r)
                            print(f"{name:<24}{transport:<5}{n:>4} {r['episodes/s']:>8.1f} "
                                  f"{r['steps/s']:>8.0f} {r['cpu_us']:>10.0f} "
                                  f"{r['client_us']:>9.0f} {r['reset50']:>9.2f} "
                                  f"{r['reset99']:>8.2f} {r['step50']:>9.2f} "
                                  f"{r['step99']:>8.2f} {r['errors']:>4.0f} {r['load']:>5.2f}",
                                  flush=True)
                finally:
                    stop(proc)
        print("\nours / echo steps/s (same transport, same N" + (
            "; median of the rounds' ratios, each round's in brackets):" if args.rounds > 1
            else "):"))
        for name, _, echo in configs:
            if echo:
                continue
            for transport in args.transports.split(","):
                cells = []
                for n in clients:
                    refs = results.get(("openenv echo", transport, n), [])
                    mine = results.get((name, transport, n), [])
                    ratios = [m["steps/s"] / e["steps/s"]
                              for m, e in zip(mine, refs, strict=False)]
                    if ratios:
                        each = (" [" + " ".join(f"{x:.2f}" for x in ratios) + "]"
                                if len(ratios) > 1 else "")
                        cells.append(f"N={n}: {statistics.median(ratios):.2f}x{each}")
                print(f"  {name:<24}{transport:<5}" + "  ".join(cells))
    finally:
        if redis_proc is not None:
            stop(redis_proc)


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
    ap.add_argument("--load", action="store_true", help="load mode (see the module doc)")
    ap.add_argument("--clients", default="1,16,64,256", help="load mode: concurrent clients")
    ap.add_argument("--episodes", type=int, default=20, help="load mode: episodes per client")
    ap.add_argument("--servers", default="", help="load mode: only these rows' servers, "
                    "comma-separated (e.g. 'clarus 1 worker,openenv echo')")
    ap.add_argument("--transports", default="HTTP,WS", help="load mode: HTTP, WS or both")
    ap.add_argument("--instructions", action="store_true", help="load mode: each "
                    "single-process server under callgrind, user-space instructions per request "
                    "(load-independent; slow: try --clients 8 --episodes 2)")
    ap.add_argument("--rounds", type=int, default=1, help="load mode: run every row this many "
                    "times, servers alternating (on a shared machine, read the median ratio)")
    ap.add_argument("--serve", choices=["clarus", "echo"], help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.load:
        load_main(args)
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
