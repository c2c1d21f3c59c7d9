"""One hostile client cannot stall everyone: medical_coding searches (milliseconds of CPU each)
run off the event loop, so honest clients' step latency barely moves while one client floods
the server with long ``search_icd10`` queries.

Measured against a real ``clarus serve`` in its own process; the assertion is on a ratio of
p99s (hostile phase / quiet phase), never on absolute times.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time

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


async def hostile(client: httpx.AsyncClient, stop: asyncio.Event, sent: list[int]) -> None:
    rng = random.Random(7)
    eid = "hostile"
    await client.post("/reset", json={"task_name": "medical_coding", "episode_id": eid})

    async def flood() -> None:
        while not stop.is_set():
            query = " ".join(rng.choice(WORDS) + rng.choice(("", "x", "ic", "al"))
                             for _ in range(30))[:200]
            r = await client.post("/step", json={"episode_id": eid, "action": {
                "action_type": "search_icd10", "parameters": {"query": query}}})
            sent.append(r.status_code)
            if r.status_code == 200 and r.json()["done"]:
                await client.post("/reset", json={"task_name": "medical_coding",
                                                  "episode_id": eid})

    await asyncio.gather(*(flood() for _ in range(4)))  # 4 requests in flight at all times


ROUNDS = 3  # quiet and flooded phases interleaved; the median round is judged


@pytest.mark.serial  # a ratio of latencies: make test runs it alone
def test_a_client_flooding_long_searches_does_not_raise_others_p99_2x() -> None:
    async def run(base: str) -> list[tuple[list[float], list[float], list[int]]]:
        async with httpx.AsyncClient(base_url=base, timeout=60,
                                     limits=httpx.Limits(keepalive_expiry=2)) as client:
            await honest_phase(client, "warm")
            rounds = []
            for r in range(ROUNDS):
                quiet = await honest_phase(client, f"quiet{r}")
                stop, sent = asyncio.Event(), []
                flood = asyncio.create_task(hostile(client, stop, sent))
                while len(sent) < 4:  # the flood is under way
                    await asyncio.sleep(0.05)
                loud = await honest_phase(client, f"loud{r}")
                stop.set()
                await flood
                rounds.append((quiet, loud, sent))
            return rounds

    with clarus_serve("--max-sessions", "64") as (_, base):
        rounds = asyncio.run(run(base))
    seen = []
    for quiet, loud, sent in rounds:
        assert len(sent) >= 20 and set(sent) == {200}, (len(sent), set(sent))
        seen.append((p99(loud) / p99(quiet), p99(quiet) * 1e3, p99(loud) * 1e3, len(sent)))
    detail = "; ".join(f"{q:.2f} ms quiet, {lo:.2f} ms flooded ({r:.2f}x, {n} hostile searches)"
                       for r, q, lo, n in seen)
    print("honest step p99 per round:", detail)
    # interleaving and the median round keep a load spike elsewhere on the machine (which hits
    # one phase of one round) from deciding the verdict; a loop that stalls fails every round
    ratio = statistics.median(r for r, *_ in seen)
    assert ratio <= 2.0, f"median round {ratio:.2f}x; {detail}"
