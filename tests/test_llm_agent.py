"""The LLM baseline against a scripted OpenAI-compatible stub served by uvicorn on 127.0.0.1:
the stub answers POST /v1/chat/completions with tool calls from a script (the oracle's plan,
plus malformed calls and server errors), and the tests check the stdout lines, the results
file, and that ``clarus regrade`` re-grades it identically."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from clarus_env.actions import ACTIONS, CODING_ACTIONS
from clarus_env.cli import main
from clarus_env.evaluation import RESULTS_FORMAT, regrade, summarize
from clarus_env.llm_agent import (
    LLMConfig,
    end_line,
    parse_seeds,
    step_line,
    system_prompt,
    to_action,
    tool_specs,
)
from clarus_env.scenario_store import load_scenario
from clarus_env.schemas import load
from clarus_env.tasks import get_task

from .serverutil import running_server, server  # noqa: F401


class Script:
    """Replies served in order: ("tool", name, arguments-string), ("text", content) or
    ("status", code). When it runs out the stub closes the case."""

    def __init__(self, items: list[tuple]) -> None:
        self.items = list(items)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def next(self, body: dict[str, Any]) -> tuple:
        with self.lock:
            self.requests.append(body)
            return self.items.pop(0) if self.items else ("tool", "close_case", "{}")


def stub_app(script: Script) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        item = script.next(body)
        n = len(script.requests)
        if item[0] == "status":  # retry-after-ms keeps the SDK's backoff short in tests
            return JSONResponse({"error": {"message": "overloaded", "type": "server_error"}},
                                status_code=item[1], headers={"retry-after-ms": "10"})
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if item[0] == "tool":
            message["tool_calls"] = [{"id": f"call_{n}", "type": "function",
                                      "function": {"name": item[1], "arguments": item[2]}}]
        else:
            message["content"] = item[1]
        return JSONResponse({
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if item[0] == "tool" else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    return app


def oracle_script(task: str, seed: int) -> list[tuple]:
    plan = get_task(task).oracle(load_scenario(task, seed))
    return [("tool", a["action_type"], json.dumps(a.get("parameters", {}))) for a in plan]


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_TOKEN", "OPENAI_API_KEY", "API_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(var, raising=False)


def stub(script: Script) -> Iterator[str]:
    return running_server(app=stub_app(script))


LINE = {
    "start": re.compile(r"^\[START\] task=(\S+) env=clarus model=(\S+)$"),
    "step": re.compile(r"^\[STEP\] step=(\d+) action=(\{.*\}) reward=(-?\d+\.\d\d) "
                       r"done=(true|false) error=(.+)$"),
    "end": re.compile(r"^\[END\] success=(true|false) steps=(\d+) score=(\d\.\d{3}) "
                      r"rewards=(-?\d+\.\d\d(?:,-?\d+\.\d\d)*)$"),
}


def parse(stdout: str) -> list[tuple[str, re.Match]]:
    out = []
    for line in stdout.splitlines():
        kind = next((k for k, rx in LINE.items() if rx.match(line)), None)
        assert kind is not None, f"unexpected stdout line: {line!r}"
        out.append((kind, LINE[kind].match(line)))
    return out


# -- units -------------------------------------------------------------------------------------
def test_tools_are_the_action_schemas() -> None:
    for task, specs in (("deductive_liability", ACTIONS), ("medical_coding", CODING_ACTIONS)):
        tools = tool_specs(task)
        assert [t["function"]["name"] for t in tools] == list(specs)
        for t in tools:
            schema = load(f"actions/{t['function']['name']}.schema.json")
            assert t["type"] == "function"
            assert t["function"]["parameters"]["properties"] == schema["properties"]
            assert t["function"]["parameters"]["required"] == schema["required"]
            assert t["function"]["description"] == schema["description"]


def test_system_prompt_names_the_vocabulary_not_the_answer() -> None:
    text = system_prompt("abductive_conflict")
    t = get_task("abductive_conflict")
    assert all(f in text for f in t.findings) and all(r in text for r in t.appeal_reasons)
    assert "submit_codes" in system_prompt("medical_coding")


def test_malformed_tool_calls_become_invalid_actions() -> None:
    assert to_action("fetch_eob", '{"claim_id": "C1"}') == {
        "action_type": "fetch_eob", "parameters": {"claim_id": "C1"}}
    assert to_action("close_case", "") == {"action_type": "close_case", "parameters": {}}
    assert to_action("fetch_eob", "{oops") == {"action_type": "fetch_eob",
                                              "parameters": "{oops"}
    assert to_action("fetch_eob", "[1, 2]") == {"action_type": "fetch_eob",
                                               "parameters": [1, 2]}


def test_log_line_formats() -> None:
    assert step_line(3, {"action_type": "x", "parameters": {"m": "a\nb"}}, -0.02, False,
                     "bad\nthing") == ('[STEP] step=3 action={"action_type":"x","parameters":'
                                       '{"m":"a\\nb"}} reward=-0.02 done=false error=bad thing')
    assert end_line(True, 2, 0.9722, [0.05, 0.92]) == \
        "[END] success=true steps=2 score=0.972 rewards=0.05,0.92"
    assert parse_seeds("1001, 1003-1005") == [1001, 1003, 1004, 1005]


def test_config_from_env_and_flags(monkeypatch: pytest.MonkeyPatch, no_keys: None) -> None:
    monkeypatch.setenv("API_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MODEL_NAME", "env-model")
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    cfg = LLMConfig.from_env(model="flag-model", api_key=None)
    assert (cfg.base_url, cfg.model, cfg.api_key) == ("http://127.0.0.1:9/v1", "flag-model",
                                                      "hf_x")
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(ValueError, match="API key"):
        LLMConfig.from_env(base_url="https://example.invalid/v1").client()


# -- end to end --------------------------------------------------------------------------------
def case_id(task: str, seed: int) -> str:
    from clarus_env.scenario_store import load_scenario

    return load_scenario(task, seed)["case"]["case_id"]


def test_infer_in_process_with_malformed_calls_and_retries(
        tmp_path: Path, capsys: pytest.CaptureFixture, no_keys: None) -> None:
    task, seed = "deductive_liability", 1001
    script = Script([("tool", "fetch_eob", "{not json"),
                     ("tool", "teleport_patient", "{}"),
                     ("text", "I think I should look at the bill."),
                     ("status", 503)]  # retried by the SDK, invisible to the episode
                    + oracle_script(task, seed))
    n_oracle = len(oracle_script(task, seed))
    out = tmp_path / "llm.json"
    with stub(script) as url:
        rc = main(["infer", "--task", task, "--seeds", str(seed), "--api-base-url",
                   f"{url}/v1", "--model", "stub-model", "--max-retries", "2",
                   "--out", str(out)])
    assert rc == 0
    lines = parse(capsys.readouterr().out)
    kinds = [k for k, _ in lines]
    assert kinds == ["start"] + ["step"] * (3 + n_oracle) + ["end"]
    assert lines[0][1].groups() == (task, "stub-model")
    steps = [m for k, m in lines if k == "step"]
    assert [int(m[1]) for m in steps] == list(range(1, len(steps) + 1))
    assert "parameters must be an object" in steps[0][5]
    assert "unknown action_type 'teleport_patient'" in steps[1][5]
    assert "unknown action_type None" in steps[2][5]
    assert all(m[5] == "null" for m in steps[3:])
    assert [m[4] for m in steps] == ["false"] * (len(steps) - 1) + ["true"]
    assert json.loads(steps[3][2]) == {"action_type": "authenticate_patient",
                                       "parameters": {"patient_id": case_id(task, seed)}}

    results = json.loads(out.read_text())
    assert results["format"] == RESULTS_FORMAT and results["agent"] == "llm:stub-model"
    assert results["tasks"] == [task] and results["trials"] == 1
    (ep,) = results["episodes"]
    assert (ep["task"], ep["seed"], ep["trial"], ep["agent_error"]) == (task, seed, 0, None)
    assert ep["actions"][0] == {"action_type": "fetch_eob", "parameters": "{not json"}
    assert ep["actions"][2] == {"action_type": None, "parameters": {}}
    assert len(ep["actions"]) == len(ep["rewards"]) == 3 + n_oracle
    assert ep["return"] == round(sum(ep["rewards"]), 6)
    end = lines[-1][1]
    assert float(end[3]) == pytest.approx(ep["grade"]["score"], abs=5e-4)
    assert end[1] == ("true" if ep["grade"]["passed"] == ep["grade"]["total"] else "false")
    assert end[4].split(",") == [f"{r:.2f}" for r in ep["rewards"]]
    assert results["summary"] == summarize(results["episodes"], 1)
    assert ep["grade"]["passed"] >= ep["grade"]["total"] - 2  # the oracle's plan still wins

    assert regrade(results) == []
    assert main(["regrade", str(out)]) == 0
    assert "re-graded identically" in capsys.readouterr().out

    # what the model was sent: the tools, the system prompt and one tool message per call
    first = script.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == list(ACTIONS)
    assert first["messages"][0]["role"] == "system" and first["model"] == "stub-model"
    assert "expected" not in json.dumps(first["messages"])
    later = script.requests[-1]["messages"]
    assert sum(m["role"] == "tool" for m in later) == 2 + n_oracle - 1
    assert len(script.requests) == 4 + n_oracle  # + the retried 503


def test_infer_against_a_server(server: str, tmp_path: Path,  # noqa: F811
                                capsys: pytest.CaptureFixture, no_keys: None) -> None:
    task, seed = "medical_coding", 1001
    out = tmp_path / "coding.json"
    with stub(Script(oracle_script(task, seed))) as url:
        rc = main(["infer", "--task", task, "--seeds", str(seed), "--url", server,
                   "--api-base-url", f"{url}/v1", "--model", "stub-model", "--out", str(out)])
    assert rc == 0
    lines = parse(capsys.readouterr().out)
    assert [k for k, _ in lines] == ["start", "step", "step", "step", "end"]
    assert lines[-1][1].group(0).startswith("[END] success=true steps=3 score=1.000")
    results = json.loads(out.read_text())
    assert results["env_url"] == server
    assert results["episodes"][0]["grade"]["score"] == 1.0
    assert regrade(results) == []


def test_endpoint_failure_is_scored_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture,
                                               no_keys: None) -> None:
    """After its retries the endpoint is still down: the episode is closed and graded where it
    stands, the error recorded, and the run goes on."""
    task, seed = "deductive_liability", 1001
    script = Script([oracle_script(task, seed)[0]] + [("status", 500)] * 10)
    out = tmp_path / "down.json"
    with stub(script) as url:
        rc = main(["infer", "--task", task, "--seeds", str(seed), "--api-base-url",
                   f"{url}/v1", "--model", "m", "--max-retries", "1", "--out", str(out)])
    assert rc == 0
    lines = parse(capsys.readouterr().out)
    assert [k for k, _ in lines] == ["start", "step", "step", "end"]
    assert json.loads(lines[2][1][2]) == {"action_type": "close_case", "parameters": {}}
    ep = json.loads(out.read_text())["episodes"][0]
    assert ep["agent_error"].startswith("InternalServerError")
    assert ep["grade"] is not None and ep["grade"]["passed"] < ep["grade"]["total"]
    assert len(script.requests) == 3  # one answer, then a request and its one retry
    assert regrade(json.loads(out.read_text())) == []
