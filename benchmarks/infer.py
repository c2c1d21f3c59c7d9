"""`clarus infer --concurrency K` against a stub endpoint that sleeps like a model: episodes/s
for each K and the ratio to K = 1 (the in-process baseline), on the same seeds.

Run: ``.venv/bin/python benchmarks/infer.py [--episodes 32] [--delay 0.05] [--k 1 4 16 32]``.
The stub (``tests/infer_stub.py``) runs under uvicorn in its own process on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    import httpx

    from clarus_env.llm_agent import LLMConfig, run
    from tests.serverutil import free_port

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--episodes", type=int, default=32)
    p.add_argument("--delay", type=float, default=0.05, help="stub seconds per request")
    p.add_argument("--k", type=int, nargs="*", default=[1, 4, 16, 32])
    args = p.parse_args()
    port = free_port()
    stub = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tests.infer_stub:app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log"],
        cwd=REPO, env={**os.environ, "CLARUS_STUB_DELAY_S": str(args.delay)})
    try:
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/log", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        cfg = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="stub", api_key="x")
        task = "deductive_liability"
        seeds = list(range(50_000, 50_000 + args.episodes))
        run(cfg, [task], {task: seeds[:2]}, split="dev", emit=lambda _: None)  # warm imports
        base = None
        print(f"{args.episodes} episodes of 4 requests, stub {args.delay * 1000:.0f} ms/request")
        print(f"{'K':>4}{'seconds':>9}{'episodes/s':>12}{'× K=1':>8}")
        for k in args.k:
            res = run(cfg, [task], {task: seeds}, split="dev", concurrency=k,
                      emit=lambda _: None)
            rate = args.episodes / res["seconds"]
            base = base or rate
            print(f"{k:>4}{res['seconds']:>9.2f}{rate:>12.1f}{rate / base:>8.1f}", flush=True)
    finally:
        stub.terminate()
        stub.wait(timeout=10)


if __name__ == "__main__":
    main()
