"""`clarus infer --concurrency K` against a sleeping stub endpoint in its own process:
K episodes at once give the serial run's results, many times faster; a 429 is retried after
its Retry-After; re-running with the same --out resumes; the results re-grade identically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from clarus_env.evaluation import regrade
from clarus_env.llm_agent import LLMConfig, journal_path, run

from .serverutil import free_port

REPO = Path(__file__).resolve().parents[1]
TASK = "deductive_liability"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tests.infer_stub:app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--no-access-log"],
        cwd=REPO, env={**os.environ, "CLARUS_STUB_DELAY_S": "0.05"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/log", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the stub endpoint did not start") from None
                time.sleep(0.1)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _play(endpoint: str, seeds: list[int], k: int, model: str = "stub",
          out: str | None = None) -> dict:
    cfg = LLMConfig(base_url=endpoint, model=model, api_key="x", max_retries=2, timeout_s=10)
    return run(cfg, [TASK], {TASK: seeds}, split="dev", concurrency=k, out=out,
               emit=lambda line: None, prices=(3.0, 15.0))


def _same(a: dict, b: dict) -> bool:
    drop = ("seconds", "resumed")
    return {k: v for k, v in a.items() if k not in drop} == \
        {k: v for k, v in b.items() if k not in drop}


@pytest.mark.serial  # a ratio of latencies: make test runs it alone
def test_sixteen_at_once_is_many_times_faster_with_the_same_results(endpoint: str) -> None:
    seeds = list(range(50_000, 50_032))
    peak = endpoint.replace("/v1", "/peak")
    httpx.get(peak)
    serial = _play(endpoint, seeds, 1)
    assert httpx.get(peak).json() == 1
    concurrent = _play(endpoint, seeds, 16)
    assert 4 < httpx.get(peak).json() <= 16  # requests overlapped, never more than K
    assert _same(serial, concurrent)
    assert [e["seed"] for e in concurrent["episodes"]] == seeds
    assert all(len(e["actions"]) == 4 and e["agent_error"] is None
               for e in concurrent["episodes"])
    u = concurrent["usage"]
    assert u["requests"] == 4 * len(seeds) and u["completion_tokens"] == 12 * u["requests"]
    assert u["cost_usd"] == pytest.approx((u["prompt_tokens"] * 3 + u["completion_tokens"] * 15)
                                          / 1e6)
    # 50 ms per request, 16 at once: a quiet 2-core machine gives >= 10x (benchmarks/infer.py
    # measures it); the bar has slack for a machine busy with other test runs, which starve the
    # client's CPU share (3.7x was seen at load 12), and still fails a run that does not overlap
    assert serial["seconds"] / concurrent["seconds"] >= 3
    assert regrade(concurrent) == []


def test_429_is_retried_after_its_retry_after(endpoint: str) -> None:
    seeds = [50_040, 50_041]
    limited = _play(endpoint, seeds, 2, model="limited")
    assert [e["agent_error"] for e in limited["episodes"]] == [None, None]
    assert limited["usage"]["requests"] == 8  # a rejected request has no usage to count
    log = httpx.get(endpoint.replace("/v1", "/log")).json()
    for e in limited["episodes"]:
        case = [(t, status) for c, t, status in log if c == e["actions"][0]["parameters"]
                ["patient_id"]]
        assert [s for _, s in case[:2]] == [429, 200]
        assert case[1][0] - case[0][0] >= 0.95  # waited what Retry-After asked, not less
    plain = _play(endpoint, seeds, 2)
    for a, b in zip(limited["episodes"], plain["episodes"], strict=True):
        assert (a["actions"], a["rewards"], a["grade"]) == (b["actions"], b["rewards"],
                                                            b["grade"])


def test_rerun_with_the_same_out_resumes(endpoint: str, tmp_path: Path) -> None:
    out = str(tmp_path / "llm.json")
    first = _play(endpoint, [50_050, 50_051], 4, out=out)
    # what an interrupted run leaves: finished episodes in the journal, no results file yet
    Path(journal_path(out)).write_text(
        "".join(json.dumps(e) + "\n" for e in first["episodes"]) + '{"task": "dedu')
    again = _play(endpoint, [50_050, 50_051, 50_052], 4, out=out)
    assert again["resumed"] == 2
    assert again["episodes"][:2] == first["episodes"]
    assert again["usage"]["requests"] == 12  # the kept episodes' usage still counts
    fresh = _play(endpoint, [50_050, 50_051, 50_052], 4)
    assert _same(again, fresh)
    with pytest.raises(ValueError, match="not llm:other"):
        _play(endpoint, [50_050], 1, model="other", out=out)


def test_cli_concurrency_out_resume_and_regrade(endpoint: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    from clarus_env.cli import main

    out = tmp_path / "cli.json"
    argv = ["infer", "--task", TASK, "--seeds", "50060-50065", "--api-base-url", endpoint,
            "--model", "stub", "--api-key", "x", "--concurrency", "4", "--out", str(out),
            "--price-input", "1", "--price-output", "2"]
    assert main(argv) == 0
    first = capsys.readouterr()
    starts = [line for line in first.out.splitlines() if line.startswith("[START]")]
    assert len(starts) == 6
    # one episode's lines stay together although four ran at once
    blocks = first.out.split("[START]")[1:]
    assert all(b.count("[END]") == 1 and b.rstrip().splitlines()[-1].startswith("[END]")
               for b in blocks)
    assert "24 requests" in first.err and "$" in first.err
    assert not Path(journal_path(str(out))).exists()
    assert main(argv) == 0
    again = capsys.readouterr()
    assert "[START]" not in again.out and "6 episode(s) kept" in again.err
    assert main(["regrade", str(out)]) == 0


def test_concurrent_episodes_against_a_clarus_server(endpoint: str) -> None:
    """With --url each concurrent episode has its own server session; results are the
    in-process ones."""
    from .serverutil import running_server

    seeds = [50_070, 50_071, 50_072, 50_073, 50_074]
    cfg = LLMConfig(base_url=endpoint, model="stub", api_key="x", max_retries=2, timeout_s=10)
    local = run(cfg, [TASK], {TASK: seeds}, split="dev", concurrency=1, emit=lambda _: None)
    with running_server() as url:
        remote = run(cfg, [TASK], {TASK: seeds}, split="dev", concurrency=4, url=url,
                     emit=lambda _: None)
    assert remote["env_url"] == url
    assert remote["episodes"] == local["episodes"]
