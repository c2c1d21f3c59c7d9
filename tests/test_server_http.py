"""The HTTP wire contract, proven against a real uvicorn server on a free loopback port.

TestClient would skip the socket, uvicorn's HTTP parser and its threadpool, which is where
body limits, keep-alive, concurrency and error shapes actually break; so every test here talks
to ``running_server`` / the ``server`` fixture over real TCP with httpx.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import jsonschema
import pytest

import clarus_env
from clarus_env.agents.random_agent import RandomAgent, RandomCodingAgent
from clarus_env.scenario_store import load_scenario
from clarus_env.tasks import get_task

from .serverutil import running_server, server  # noqa: F401  (server is a fixture)

BILLING = ("deductive_liability", "abductive_conflict", "adversarial_fabrication")
CHECKS = {"deductive_liability": 17, "abductive_conflict": 22, "adversarial_fabrication": 28}
CLOSE = {"action_type": "close_case", "parameters": {}}


@pytest.fixture(scope="module")
def client(server: str) -> Iterator[httpx.Client]:  # noqa: F811
    with httpx.Client(base_url=server, timeout=30) as c:
        yield c


def assert_error(resp: httpx.Response, status: int | None = None, code: str | None = None
                 ) -> dict[str, Any]:
    """Every refusal is a JSON object with string ``code`` and ``message``, never a 5xx
    other than the documented 503."""
    assert resp.status_code < 500 or resp.status_code == 503, (resp.status_code, resp.text)
    assert resp.headers.get("content-type", "").startswith("application/json"), resp.text
    body = resp.json()
    assert isinstance(body, dict) and set(body) == {"code", "message"}, body
    assert isinstance(body["code"], str) and body["code"], body
    assert isinstance(body["message"], str) and body["message"], body
    if status is not None:
        assert resp.status_code == status, (resp.status_code, body)
    if code is not None:
        assert body["code"] == code, body
    return body


@functools.cache
def oracle_plan(task: str, seed: int) -> tuple[dict[str, Any], ...]:
    return tuple(get_task(task).oracle(load_scenario(task, seed)))


@functools.cache
def inprocess_grade(task: str, seed: int) -> str:
    """The grade the Python API gives the oracle for this seed, as canonical JSON."""
    env = clarus_env.make(task)
    env.reset(seed=seed)
    res = None
    for action in oracle_plan(task, seed):
        res = env.step(action)
        if res.done:
            break
    assert res is not None and res.done, (task, seed)
    env.close()
    return json.dumps(res.info["grade"], sort_keys=True)


def play_oracle(c: httpx.Client, task: str, seed: int, episode_id: str | None = None
                ) -> dict[str, Any]:
    """One full oracle episode over HTTP; returns the last /step response body."""
    body: dict[str, Any] = {"task_name": task, "seed": seed}
    if episode_id is not None:
        body["episode_id"] = episode_id
    r = c.post("/reset", json=body)
    assert r.status_code == 200, r.text
    eid = r.json()["episode_id"]
    assert episode_id is None or eid == episode_id
    last: dict[str, Any] = {}
    for action in oracle_plan(task, seed):
        r = c.post("/step", json={"episode_id": eid, "action": action})
        assert r.status_code == 200, r.text
        last = r.json()
        assert last["episode_id"] == eid
        if last["done"]:
            break
    assert last.get("done"), (task, seed, last)
    return last


# ---------------------------------------------------------------------------- endpoints


def test_health(client: httpx.Client) -> None:
    r = client.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "healthy" and body["version"] == clarus_env.__version__
    assert isinstance(body["sessions"], int)


def test_metadata_lists_every_task_with_its_check_count(client: httpx.Client) -> None:
    r = client.get("/metadata")
    assert r.status_code == 200
    meta = r.json()
    assert meta["name"] == "clarus" and meta["version"] == clarus_env.__version__
    assert meta["description"]
    tasks = {t["name"]: t for t in meta["tasks"]}
    assert set(tasks) == set(clarus_env.TASKS)
    for name, n in CHECKS.items():
        assert tasks[name]["checks"] == n, tasks[name]
        assert tasks[name]["kind"] == "billing"
    assert tasks["medical_coding"]["kind"] == "coding"
    assert tasks["medical_coding"]["checks"] == 3
    for t in tasks.values():
        assert t["api_call_budget"] > 0 and t["description"]
    for name in CHECKS:  # billing tasks name their vocabulary, each word with its meaning
        task = get_task(name)
        assert list(tasks[name]["findings"]) == list(task.findings), name
        assert all(tasks[name]["findings"].values()), name
        assert list(tasks[name]["appeal_reasons"]) == list(task.appeal_reasons), name
    assert "findings" not in tasks["medical_coding"]


def test_schema_returns_json_schemas_that_describe_real_traffic(client: httpx.Client) -> None:
    r = client.get("/schema")
    assert r.status_code == 200
    schemas = r.json()
    for key in ("action", "observation", "state"):
        jsonschema.Draft202012Validator.check_schema(schemas[key])
    for key in ("action", "observation"):
        jsonschema.Draft202012Validator.check_schema(schemas["medical_coding"][key])

    # The schemas describe what the server actually sends and accepts.
    reset = client.post("/reset", json={"task_name": "deductive_liability", "seed": 1001,
                                        "episode_id": "schema-probe"}).json()
    jsonschema.validate(reset["observation"], schemas["observation"])
    action = oracle_plan("deductive_liability", 1001)[0]
    jsonschema.validate(action, schemas["action"])
    step = client.post("/step", json={"episode_id": "schema-probe", "action": action}).json()
    jsonschema.validate(step["observation"], schemas["observation"])
    state = client.get("/state", params={"episode_id": "schema-probe"}).json()
    jsonschema.validate(state, schemas["state"])

    reset = client.post("/reset", json={"task_name": "medical_coding", "seed": 1001,
                                        "episode_id": "schema-probe-coding"}).json()
    jsonschema.validate(reset["observation"], schemas["medical_coding"]["observation"])
    action = oracle_plan("medical_coding", 1001)[0]
    jsonschema.validate(action, schemas["medical_coding"]["action"])
    step = client.post("/step", json={"episode_id": "schema-probe-coding", "action": action})
    jsonschema.validate(step.json()["observation"], schemas["medical_coding"]["observation"])
    state = client.get("/state", params={"episode_id": "schema-probe-coding"}).json()
    jsonschema.validate(state, schemas["state"])


def test_readme_client_flow_over_raw_http_uses_the_default_session(server: str) -> None:  # noqa: F811
    """The seed README's snippet, as bytes on the wire: no episode_id anywhere."""
    with httpx.Client(base_url=server, timeout=30) as c:
        r = c.post("/reset", json={"task_name": "deductive_liability", "seed": 1001})
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body) == {"episode_id", "observation", "reward", "done", "info"}
        obs = body["observation"]
        assert obs["patient_complaint"] and obs["case_id"]
        assert body["reward"] == 0.0 and body["done"] is False

        r = c.post("/step", json={"action": {"action_type": "authenticate_patient",
                                             "parameters": {"patient_id": obs["case_id"]}}})
        assert r.status_code == 200, r.text
        result = r.json()
        assert result["reward"] == pytest.approx(0.05)
        assert result["episode_id"] == body["episode_id"]
        assert result["observation"]["last_action_error"] is None

        state = c.get("/state").json()
        assert state["episode_id"] == body["episode_id"]
        assert state["task"] == "deductive_liability" and state["seed"] == 1001
        assert state["step_count"] == 1 and state["done"] is False


def test_reset_with_episode_id_addresses_that_episode(client: httpx.Client) -> None:
    r = client.post("/reset", json={"task_name": "abductive_conflict", "seed": 1002,
                                    "episode_id": "mine-1"})
    assert r.status_code == 200 and r.json()["episode_id"] == "mine-1"
    case_id = r.json()["observation"]["case_id"]
    step = client.post("/step", json={"episode_id": "mine-1", "action": {
        "action_type": "authenticate_patient", "parameters": {"patient_id": case_id}}})
    assert step.status_code == 200 and step.json()["episode_id"] == "mine-1"
    state = client.get("/state", params={"episode_id": "mine-1"}).json()
    assert state == {**state, "episode_id": "mine-1", "task": "abductive_conflict",
                     "seed": 1002, "step_count": 1}
    # Resetting the same id starts over (and may switch task).
    again = client.post("/reset", json={"task_name": "medical_coding", "seed": 7,
                                        "episode_id": "mine-1"})
    assert again.status_code == 200
    state = client.get("/state", params={"episode_id": "mine-1"}).json()
    assert state["task"] == "medical_coding" and state["step_count"] == 0


def test_reset_with_an_empty_body_starts_the_default_task(client: httpx.Client) -> None:
    r = client.post("/reset")
    assert r.status_code == 200, r.text
    assert r.json()["observation"]["task_name"] == "deductive_liability"


def test_many_sessions_at_once_are_isolated(client: httpx.Client) -> None:
    """Interleaved steps on 12 episodes: each one's step count, task and seed are its own."""
    plan = [(clarus_env.TASKS[i % 4], 2000 + i) for i in range(12)]
    ids = []
    for task, seed in plan:
        r = client.post("/reset", json={"task_name": task, "seed": seed})
        assert r.status_code == 200
        ids.append(r.json()["episode_id"])
    assert len(set(ids)) == len(ids)
    for i, eid in enumerate(ids):  # episode i takes i % 3 + 1 steps
        task, seed = plan[i]
        for action in oracle_plan(task, seed)[: i % 3 + 1]:
            assert client.post("/step", json={"episode_id": eid, "action": action}
                               ).status_code == 200
    for i, eid in enumerate(ids):
        state = client.get("/state", params={"episode_id": eid}).json()
        assert (state["task"], state["seed"]) == plan[i]
        assert state["step_count"] == i % 3 + 1
        assert state["episode_id"] == eid


# ---------------------------------------------------------------------------- limits


def test_capacity_limit_is_a_503_with_a_code() -> None:
    with running_server(capacity=2, per_client=2) as url, \
            httpx.Client(base_url=url, timeout=30) as c:
        for eid in ("a", "b"):
            assert c.post("/reset", json={"episode_id": eid}).status_code == 200
        full = c.post("/reset", json={"episode_id": "c"})
        assert_error(full, 503, "capacity_exceeded")
        assert_error(c.post("/reset", json={}), 503, "capacity_exceeded")
        # Re-resetting a held episode needs no new slot.
        assert c.post("/reset", json={"episode_id": "a", "seed": 5}).status_code == 200
        assert c.get("/health").json()["sessions"] == 2
        # A finished episode gives up its slot to a new one when the server is full.
        assert c.post("/step", json={"episode_id": "a", "action": CLOSE}).json()["done"]
        assert c.post("/reset", json={"episode_id": "c"}).status_code == 200
        assert_error(c.get("/state", params={"episode_id": "a"}), 404, "unknown_episode")
        assert c.get("/state", params={"episode_id": "b"}).status_code == 200
        assert_error(c.post("/reset", json={"episode_id": "d"}), 503, "capacity_exceeded")


def test_single_session_client_never_fills_the_server() -> None:
    """The seed's client resets without an id over and over, abandoning episodes mid-way;
    episodes nobody can address any more make room, so it never sees capacity_exceeded."""
    with running_server(capacity=2, per_client=2) as url, \
            httpx.Client(base_url=url, timeout=30) as c:
        assert c.post("/reset", json={"episode_id": "held"}).status_code == 200
        for seed in range(6):
            r = c.post("/reset", json={"task_name": "abductive_conflict", "seed": seed})
            assert r.status_code == 200, r.text
            assert c.post("/step", json={"action": oracle_plan("abductive_conflict", seed)[0]}
                          ).json()["episode_id"] == r.json()["episode_id"]
            assert c.get("/state").json()["seed"] == seed
        assert c.get("/state", params={"episode_id": "held"}).status_code == 200
        assert c.get("/health").json()["sessions"] == 2


def test_idle_sessions_expire() -> None:
    with running_server(idle_ttl_s=0.3) as url, httpx.Client(base_url=url, timeout=30) as c:
        assert c.post("/reset", json={"episode_id": "idle"}).status_code == 200
        assert c.get("/state", params={"episode_id": "idle"}).status_code == 200
        time.sleep(0.7)
        gone = c.post("/step", json={"episode_id": "idle", "action": CLOSE})
        assert_error(gone, 404, "unknown_episode")
        assert_error(c.get("/state", params={"episode_id": "idle"}), 404, "unknown_episode")
        assert c.get("/health").json()["sessions"] == 0


def test_body_size_limit_is_a_413(client: httpx.Client, server: str) -> None:  # noqa: F811
    limit = 256 * 1024
    big = {"action": {"action_type": "write_audit_entry",
                      "parameters": {"entry": "x" * (limit + 10)}}}
    assert_error(client.post("/step", json=big), 413, "body_too_large")
    # No Content-Length (chunked): the limit still holds while streaming.
    def chunks() -> Iterator[bytes]:
        yield b'{"task_name": "'
        for _ in range(40):
            yield b"y" * 8192
        yield b'"}'
    assert_error(client.post("/reset", content=chunks(),
                             headers={"content-type": "application/json"}),
                 413, "body_too_large")
    # A Content-Length over the limit is refused from the header, before any body arrives
    # (httpx refuses to send a lying header, so this one goes over a raw socket).
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 99999999999\r\nConnection: close\r\n\r\n{}")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, payload = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), raw[:300]
    assert json.loads(payload)["code"] == "body_too_large"


HOSTILE: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/reset", {"content": b"{not json"}),
    ("POST", "/reset", {"content": b"\xff\xfe\x00garbage", "headers": {
        "content-type": "application/json"}}),
    ("POST", "/reset", {"content": b"[" * 50000 + b"]" * 50000,
                        "headers": {"content-type": "application/json"}}),
    ("POST", "/reset", {"json": []}),
    ("POST", "/reset", {"json": "deductive_liability"}),
    ("POST", "/reset", {"json": {"task_name": 5}}),
    ("POST", "/reset", {"json": {"task_name": "no_such_task"}}),
    ("POST", "/reset", {"json": {"task_name": "x" * 5000}}),
    ("POST", "/reset", {"json": {"seed": "abc"}}),
    ("POST", "/reset", {"json": {"seed": -1}}),
    ("POST", "/reset", {"json": {"seed": 10**40}}),
    ("POST", "/reset", {"json": {"seed": 1.5}}),
    ("POST", "/reset", {"content": b'{"seed": NaN}',
                        "headers": {"content-type": "application/json"}}),
    ("POST", "/reset", {"json": {"split": "holdout"}}),
    ("POST", "/reset", {"json": {"episode_id": ""}}),
    ("POST", "/reset", {"json": {"episode_id": "e" * 1000}}),
    ("POST", "/reset", {"json": {"unexpected": 1}}),
    ("POST", "/reset", {"content": b'{"task_name": "deductive_liability"}',
                        "headers": {"content-type": "text/plain"}}),
    ("POST", "/step", {"json": {}}),
    ("POST", "/step", {"json": {"episode_id": "nope", "action": CLOSE}}),
    ("POST", "/step", {"json": {"episode_id": 12, "action": CLOSE}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": "close_case"}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": None}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": [1, 2]}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": {"action_type": 3}}}),
    ("POST", "/step", {"json": {"episode_id": "hostile",
                                "action": {"action_type": "rm_rf", "parameters": {}}}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": {
        "action_type": "authenticate_patient", "parameters": "yes"}}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": {
        "action_type": "authenticate_patient", "parameters": {"patient_id": ["a"] * 1000}}}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": {
        "action_type": "draft_resolution", "parameters": {"amount": "lots", "x": {"y": []}}}}}),
    ("POST", "/step", {"json": {"episode_id": "hostile", "action": {
        "action_type": "draft_resolution", "parameters": {
            "resolution_type": "refund_request", "amount": 10**30, "body": "b",
            "cited_artifacts": [{}, None, 7], "appeal_reason": ["x"]}}}}),
    ("POST", "/step", {"content": b'{"episode_id": "hostile", "action": {"action_type": '
                                  b'"write_diagnosis", "parameters": {"amount": 1e999, '
                                  b'"finding": -Infinity}}}',
                       "headers": {"content-type": "application/json"}}),
    ("POST", "/step", {"content": b'{"episode_id": "hostile", "action": {"action_type": '
                                  b'"check_deadline", "parameters": {"deadline_type": '
                                  b'"\\ud800\\udfff\\ud800"}}}',
                       "headers": {"content-type": "application/json"}}),
    ("POST", "/step", {"content": b'{"episode_id": "hostile", "action": {"action_type": '
                                  b'"write_audit_entry", "parameters": {"summary": "\\ud800"}}}',
                       "headers": {"content-type": "application/json"}}),
    ("POST", "/reset", {"content": b'{"task_name": "\\udc00"}',
                        "headers": {"content-type": "application/json"}}),
    ("POST", "/step", {"json": {"episode_id": "hostile-coding", "action": {
        "action_type": "submit_codes", "parameters": {"primary_icd10": 1,
                                                      "secondary_icd10s": "E11.9",
                                                      "cpt_codes": [None]}}}}),
    ("POST", "/step", {"json": {"episode_id": "hostile-coding", "action": {
        "action_type": "get_icd10", "parameters": {"code": "\u0000" * 10}}}}),
    ("GET", "/state?episode_id=nope", {}),
    ("GET", "/state?episode_id=" + "z" * 4000, {}),
    ("GET", "/state?episode_id=hostile&junk=1&junk=2&%ff=%00", {}),
    ("GET", "/reset", {}),
    ("PUT", "/step", {"json": {}}),
    ("DELETE", "/health", {}),
    ("PATCH", "/metadata", {"json": {}}),
    ("GET", "/no/such/path", {}),
    ("POST", "/schema", {"json": {}}),
]


def test_hostile_requests_get_json_errors_never_500(client: httpx.Client) -> None:
    for eid, task in (("hostile", "deductive_liability"), ("hostile-coding", "medical_coding")):
        assert client.post("/reset", json={"task_name": task, "seed": 3,
                                           "episode_id": eid}).status_code == 200
    for method, path, kwargs in HOSTILE:
        r = client.request(method, path, **kwargs)
        assert r.status_code < 500, (method, path, r.status_code, r.text[:300])
        body = r.json()
        if r.status_code >= 400:
            assert_error(r)
        elif path == "/step":  # an invalid action is an in-episode error, in the observation
            assert body["observation"]["last_action_error"], (method, path, body)
        else:  # unknown query parameters are ignored
            assert path.startswith("/state?episode_id=hostile&"), (method, path, body)
    assert client.get("/health").status_code == 200  # and the server is still fine


# ---------------------------------------------------------------------------- episodes


@pytest.mark.parametrize("task", clarus_env.TASKS)
def test_oracle_episode_over_http_grades_like_the_python_api(client: httpx.Client,
                                                              task: str) -> None:
    for seed in (1001, 1002):
        last = play_oracle(client, task, seed)
        grade = last["info"]["grade"]
        assert grade["passed"] == grade["total"]
        assert json.dumps(grade, sort_keys=True) == inprocess_grade(task, seed)
        state = client.get("/state", params={"episode_id": last["episode_id"]}).json()
        assert state["done"] is True and state["score"] == grade["score"]


def test_32_concurrent_sessions_have_no_cross_talk(server: str) -> None:  # noqa: F811
    jobs = [(clarus_env.TASKS[i % 4], 3000 + i) for i in range(32)]
    for task, seed in jobs:  # the reference grades, computed before the threads start
        inprocess_grade(task, seed)
    results: dict[int, str] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(jobs))

    def worker(i: int) -> None:
        task, seed = jobs[i]
        try:
            with httpx.Client(base_url=server, timeout=60) as c:
                r = c.post("/reset", json={"task_name": task, "seed": seed})
                assert r.status_code == 200, r.text
                eid = r.json()["episode_id"]
                barrier.wait(timeout=60)  # every episode is live before anyone steps
                last: dict[str, Any] = {}
                for action in oracle_plan(task, seed):
                    r = c.post("/step", json={"episode_id": eid, "action": action})
                    assert r.status_code == 200, r.text
                    last = r.json()
                    assert last["episode_id"] == eid
                    if last["done"]:
                        break
                state = c.get("/state", params={"episode_id": eid}).json()
                assert (state["task"], state["seed"], state["done"]) == (task, seed, True)
                results[i] = json.dumps(last["info"]["grade"], sort_keys=True)
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    assert len(results) == len(jobs)
    for i, (task, seed) in enumerate(jobs):
        assert results[i] == inprocess_grade(task, seed), (task, seed)


# ---------------------------------------------------------------------------- answer key


def _leaves(x: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, k)
    elif isinstance(x, list):
        for v in x:
            yield from _leaves(v, key)
    else:
        yield key, x


def _pattern(value: str) -> re.Pattern[str]:
    """``value`` as a whole token: 7314 must not match 17314, 73.14 must not match 173.145."""
    return re.compile(r"(?<![\w.])" + re.escape(value) + r"(?![\w])")


def billing_secrets(scenario: dict[str, Any], vocabulary: str) -> dict[str, re.Pattern[str]]:
    """The answer key's traces no honest response has a reason to contain, as patterns.

    Three kinds, each kept only if it matches nowhere in the scenario's public part (case and
    artifacts, which the agent may legitimately fetch) nor in the task's vocabulary (/schema,
    /metadata, finding names): distinctive values of ``expected`` (strings, and cent amounts
    spelled as cents and as dollars), its field names (a serialized key would carry them),
    and its ``"field": value`` pairs (which catch enum-valued answers such as the finding).
    """
    public = json.dumps({k: v for k, v in scenario.items() if k != "expected"}, default=str)
    candidates: dict[str, re.Pattern[str]] = {}
    for key, v in _leaves(scenario["expected"]):
        if len(key) >= 8:
            candidates[f"key {key}"] = _pattern(key)
        if isinstance(v, str | int) and not isinstance(v, bool):
            candidates[f"pair {key}={v}"] = re.compile(
                re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(json.dumps(v)))
        if isinstance(v, str) and len(v) >= 5:
            candidates[f"value {key}={v}"] = _pattern(v)
        elif isinstance(v, int) and not isinstance(v, bool) and key.endswith("_cents") and v:
            # (a zero amount, "nothing owed", is no secret: 0.00 fills every ledger)
            for form in [f"{v / 100:.2f}", f"{v / 100:,.2f}"] + ([str(v)] if v >= 1000 else []):
                candidates[f"amount {key}={form}"] = _pattern(form)
    return {label: pat for label, pat in candidates.items()
            if not pat.search(public) and not pat.search(vocabulary)}


def _agent(task: str, seed: int) -> Any:
    if task == "medical_coding":
        return RandomCodingAgent(task, seed=seed)
    return RandomAgent(task, seed=seed)


def _play_and_collect(c: httpx.Client, task: str, seed: int, kind: str
                      ) -> list[tuple[str, str, int]]:
    """Play one episode; returns (sent-so-far, response body, cases submitted) per response.

    Every response the episode produces is collected: /reset, each /step and a /state after
    each step. ``sent-so-far`` is every request body sent up to that response, because a
    value the agent itself sent may legitimately be echoed back.
    """
    out: list[tuple[str, str, int]] = []
    sent = json.dumps({"task_name": task, "seed": seed})
    r = c.post("/reset", json={"task_name": task, "seed": seed})
    assert r.status_code == 200
    body = r.json()
    eid = body["episode_id"]
    out.append((sent, r.text, 0))
    plan = list(oracle_plan(task, seed)) if kind == "oracle" else None
    agent = _agent(task, seed)
    agent.reset(SimpleNamespace(**body["observation"]))
    submitted = 0
    for _ in range(200):
        obs = SimpleNamespace(**body["observation"])
        action = (plan.pop(0) if plan else CLOSE) if plan is not None else agent.act(obs)
        payload = {"episode_id": eid, "action": action}
        sent += json.dumps(payload)
        r = c.post("/step", json=payload)
        assert r.status_code == 200, r.text
        body = r.json()
        if task == "medical_coding":
            submitted = 3 - body["observation"]["remaining_tasks"]
        text = r.text
        if action.get("action_type") in ("search_icd10", "search_cpt", "get_icd10"):
            # code-set lookups legitimately list codes; the rest of the body must not leak
            stripped = dict(body, observation={**body["observation"],
                                               "last_action_result": None})
            text = json.dumps(stripped)
        out.append((sent, text, submitted))
        out.append((sent, c.get("/state", params={"episode_id": eid}).text, submitted))
        if body["done"]:
            break
    assert body["done"], (task, seed, kind)
    return out


@pytest.mark.parametrize("kind", ["oracle", "random"])
@pytest.mark.parametrize("task", BILLING)
def test_no_response_contains_the_billing_answer_key(client: httpx.Client, task: str,
                                                     kind: str) -> None:
    vocabulary = client.get("/schema").text + client.get("/metadata").text + json.dumps(
        [get_task(task).findings, get_task(task).appeal_reasons])
    checked = 0
    for seed in (1001, 1002, 1003, 1004):
        secrets = billing_secrets(load_scenario(task, seed), vocabulary)
        checked += len(secrets)
        for sent, text, _ in _play_and_collect(client, task, seed, kind):
            for label, pattern in secrets.items():
                if pattern.search(sent):  # the agent said it first: an echo is fine
                    continue
                assert not pattern.search(text), (task, seed, kind, label, text)
    assert checked >= 8, "the answer key must leave something distinctive to search for"


@pytest.mark.parametrize("kind", ["oracle", "random"])
def test_no_response_reveals_a_coding_case_before_it_is_submitted(client: httpx.Client,
                                                                  kind: str) -> None:
    checked = 0
    for seed in (1001, 1002, 1003, 1004):
        scenario = load_scenario("medical_coding", seed)
        cases = scenario["cases"]
        notes = " ".join(c["clinical_note"] for c in cases)
        for sent, text, submitted in _play_and_collect(client, "medical_coding", seed, kind):
            shown = json.loads(text).get("observation", {}).get("clinical_note")
            if shown is not None and submitted < len(cases):  # cases are served in list order
                assert shown == cases[submitted]["clinical_note"], (seed, submitted)
            seen = {code for case in cases[:submitted] for _, code in _leaves(case["expected"])}
            for case in cases[submitted:]:
                expected = case["expected"]
                for listed in (expected["secondary_icd10s"], expected["cpt_codes"]):
                    if listed:  # the list as a whole
                        assert json.dumps(listed) not in text, (seed, kind, listed)
                for _, code in _leaves(expected):
                    if code in seen or code in sent or code in notes:
                        continue
                    checked += 1
                    assert not _pattern(code).search(text), (seed, kind, code, text[:2000])
    assert checked > 0


@pytest.mark.parametrize("task", BILLING)
def test_the_leak_search_would_catch_a_leaked_answer_key(client: httpx.Client,
                                                         task: str) -> None:
    """Guard on the guard: a response carrying ``expected`` (whole, or one amount in
    dollars) would be caught by the patterns the tests above search for."""
    vocabulary = client.get("/schema").text + client.get("/metadata").text
    scenario = load_scenario(task, 1001)
    secrets = billing_secrets(scenario, vocabulary)
    leaked = json.dumps({"observation": {"last_action_result": scenario["expected"]}})
    assert any(p.search(leaked) for p in secrets.values())
    if task != "abductive_conflict":  # there the amount is the public denied line's
        for seed in range(1001, 1040):  # a scenario whose amount no public record also shows
            scenario = load_scenario(task, seed)
            cents = scenario["expected"]["amount_cents"]
            secrets = billing_secrets(scenario, vocabulary)
            if cents and f"amount amount_cents={cents / 100:,.2f}" in secrets:
                break
        prose = json.dumps({"feedback": f"you were overcharged ${cents / 100:,.2f}."})
        assert any(p.search(prose) for p in secrets.values()), secrets
