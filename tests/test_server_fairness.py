"""One hostile client cannot stall everyone: medical_coding searches (milliseconds of CPU each)
run off the event loop, so honest clients' step latency barely moves while one client floods
the server with long ``search_icd10`` queries.

Measured against a real ``clarus serve`` in its own process; the assertion is on a ratio of
p99s (hostile phase / quiet phase), never on absolute times.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import statistics
import time
from typing import Any

import httpx
import pytest

from clarus_env.splits import seeds

from .serverutil import clarus_serve

HONEST = 8
STEPS = 100  # per honest client and phase
WORDS = ("fracture", "chronic", "diabetes", "hypertension", "abdominal", "pneumonia", "acute",
         "infection", "bilateral", "malignant", "neoplasm", "syndrome", "disorder", "lesion")


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


async def honest_phase(client: httpx.AsyncClient, tag: str) -> list[float]:
    seed = seeds("train", "deductive_liability")[0]

    async def one(i: int) -> list[float]:
        eid = f"honest-{tag}-{i}"
        r = await client.post("/reset", json={"episode_id": eid, "seed": seed})
        assert r.status_code == 200, r.text
        out = []
        for n in range(STEPS):
            if n and n % 15 == 0:  # stay inside the budget: a fresh episode now and then
                await client.post("/reset", json={"episode_id": eid, "seed": seed})
            t = time.perf_counter()
            r = await client.post("/step", json={"episode_id": eid, "action": {
                "action_type": "write_audit_entry", "parameters": {"summary": "note"}}})
            out.append(time.perf_counter() - t)
            assert r.status_code == 200, r.text
        await client.delete(f"/episodes/{eid}")
        return out

    return [x for xs in await asyncio.gather(*(one(i) for i in range(HONEST))) for x in xs]


async def hostile(base: str, stop: Any) -> int:
    """Four searches in flight at all times until ``stop`` is set; returns how many were sent
    (any status but 200 fails the run)."""
    rng = random.Random(7)
    eid = "hostile"
    sent = 0
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await client.post("/reset", json={"task_name": "medical_coding", "episode_id": eid})

        async def flood() -> None:
            nonlocal sent
            while not stop.is_set():
                query = " ".join(rng.choice(WORDS) + rng.choice(("", "x", "ic", "al"))
                                 for _ in range(30))[:200]
                r = await client.post("/step", json={"episode_id": eid, "action": {
                    "action_type": "search_icd10", "parameters": {"query": query}}})
                if r.status_code != 200:
                    raise AssertionError(f"hostile search got {r.status_code}: {r.text}")
                sent += 1
                if r.json()["done"]:
                    await client.post("/reset", json={"task_name": "medical_coding",
                                                      "episode_id": eid})

        await asyncio.gather(*(flood() for _ in range(4)))
    return sent


def _hostile_process(base: str, started: Any, stop: Any, out: Any) -> None:
    """The flood runs in a process of its own, as a real hostile client would: its responses
    are parsed on its own cores' time, not on the honest clients' event loop."""
    started.set()
    out.put(asyncio.run(hostile(base, stop)))


ROUNDS = 4  # quiet and flooded phases interleaved; the pooled p99s are judged
# On 2 cores the flood's process and its search thread take a core from everyone, so honest
# p99 rises 1.2-6x (measured on clean clones) even with a loop that never waits on a search;
# the bug this guards stalled everyone by two orders of magnitude (p50 0.5 -> 89 ms, p99
# 309 ms). That searches never run on the loop at all is asserted exactly below.
BOUND = 10.0


@pytest.mark.serial  # a ratio of latencies: make test runs it alone
def test_a_client_flooding_long_searches_does_not_stall_the_others() -> None:
    ctx = multiprocessing.get_context("spawn")

    async def run(base: str) -> list[tuple[list[float], list[float], int]]:
        async with httpx.AsyncClient(base_url=base, timeout=60,
                                     limits=httpx.Limits(keepalive_expiry=2)) as client:
            await honest_phase(client, "warm")
            rounds = []
            for r in range(ROUNDS):
                quiet = await honest_phase(client, f"quiet{r}")
                started, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
                proc = ctx.Process(target=_hostile_process, args=(base, started, stop, out))
                proc.start()
                try:
                    while not started.is_set():
                        await asyncio.sleep(0.05)
                    await asyncio.sleep(1.0)  # the flood is under way
                    loud = await honest_phase(client, f"loud{r}")
                finally:
                    stop.set()
                sent = await asyncio.to_thread(out.get, True, 60)
                proc.join(30)
                assert proc.exitcode == 0, proc.exitcode
                rounds.append((quiet, loud, sent))
            return rounds

    with clarus_serve("--max-sessions", "64") as (_, base):
        rounds = asyncio.run(run(base))
    seen = []
    for quiet, loud, sent in rounds:
        assert sent >= 20, sent
        seen.append((p99(loud) / p99(quiet), p99(quiet) * 1e3, p99(loud) * 1e3, sent))
    detail = "; ".join(f"{q:.2f} ms quiet, {lo:.2f} ms flooded ({r:.2f}x, {n} hostile searches)"
                       for r, q, lo, n in seen)
    print("honest step p99 per round:", detail)
    # interleaved rounds, pooled: a load spike elsewhere on the machine hits one phase of one
    # round and moves both pools alike; a loop that stalls behind the searches raises every
    # flooded round
    quiet_all = [x for q, _, _ in rounds for x in q]
    loud_all = [x for _, lo, _ in rounds for x in lo]
    ratio = p99(loud_all) / p99(quiet_all)
    assert ratio <= BOUND, (f"pooled p99 {p99(quiet_all) * 1e3:.2f} ms quiet, "
                          f"{p99(loud_all) * 1e3:.2f} ms flooded ({ratio:.2f}x); {detail}")


def test_coding_steps_never_run_on_the_event_loop() -> None:
    """The routing rule itself, without timing: a transport first tries a step with
    ``nowait=True`` on the loop; a medical_coding step must refuse (WouldBlock, nothing
    applied) so it goes to the threadpool, while a billing step is applied right there."""
    from clarus_env.server.sessions import SessionManager, WouldBlock

    sessions = SessionManager(capacity=4)
    search = {"action_type": "search_icd10", "parameters": {"query": "fever"}}
    sessions.reset("medical_coding", seeds("train", "medical_coding")[0], None, "coder")
    with pytest.raises(WouldBlock):
        sessions.step("coder", search, nowait=True)
    out = sessions.step("coder", search)  # the threadpool's call: applied once
    assert out["observation"]["api_calls_used"] == 1, out["observation"]
    sessions.reset("deductive_liability", seeds("train", "deductive_liability")[0], None, "biller")
    out = sessions.step("biller", {"action_type": "write_audit_entry",
                                   "parameters": {"summary": "note"}}, nowait=True)
    assert out["observation"]["api_calls_used"] == 1, out["observation"]
