"""The /web routes over real HTTP: the page, its catalog, replay, check links, and the rule
that the answer key never reaches the browser (every byte the page's routes send during an
episode is searched for the scenario's expected values)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clarus_env import make
from clarus_env.agents import make_agent
from clarus_env.schemas import SCHEMA_DIR
from clarus_env.server.web import check_links
from clarus_env.splits import seeds
from clarus_env.tasks import TASKS

from .serverutil import running_server

WEB = Path(__file__).resolve().parents[1] / "clarus_env" / "web"
# what a person does before deciding anything: reads; never writes an answer
READ_ONLY = {"authenticate_patient", "fetch_claim_record", "fetch_eob", "fetch_provider_record",
             "fetch_payment_ledger", "fetch_plan_document", "lookup_procedure_code",
             "fetch_facility_record", "fetch_payment_processor_log", "check_regulatory_rule",
             "check_deadline"}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server(warm=False) as url:
        yield url


class Recorder:
    """An HTTP client that keeps every response body, as the browser would receive them."""

    def __init__(self, base_url: str) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=120)
        self.bodies: list[str] = []

    def get(self, path: str) -> httpx.Response:
        r = self.client.get(path)
        self.bodies.append(r.text)
        return r

    def post(self, path: str, body: Any) -> httpx.Response:
        r = self.client.post(path, json=body)
        self.bodies.append(r.text)
        return r


def page_load(rec: Recorder) -> None:
    """Everything the page loads before an episode starts."""
    assert rec.get("/web").status_code == 200
    for name in ("app.js", "render.js", "style.css"):
        assert rec.get(f"/web/static/{name}").status_code == 200
    assert rec.get("/web/api/catalog").status_code == 200


def secrets_of(scenario: dict[str, Any], public: str) -> list[str]:
    """Strings that would give the answer away if the page ever received them: the expected
    finding, the scenario's branch labels and the answer key's own field names, less the
    words that are public vocabulary anyway (the action schemas, the task's check ids)."""
    if scenario["task"] == "medical_coding":
        out = []
        for case in scenario["cases"]:
            exp = case["expected"]
            out += [exp["primary_icd10"], *exp["secondary_icd10s"], *exp["cpt_codes"]]
        return [s for s in out if s]
    exp = scenario["expected"]
    variant = scenario.get("variant") or {}
    labels = [exp.get("finding"), *exp.get("accepted_findings", []),
              *(variant.get(k) for k in ("kind", "branch", "timing", "amount_branch"))]
    keys = [k for k in exp if "_" in k]  # e.g. amount_cents, decisive_ids, must_cite
    return sorted(s for s in {*labels, *keys}
                  if isinstance(s, str) and "_" in s and s not in public)  # identifiers, not words


def public_words(task: str, catalog: str, scenario: dict[str, Any]) -> str:
    """The catalog, the check ids, and every field name of the records an agent may read
    (``modifier_indicator`` names a field of the NCCI record as well as of the key)."""
    from clarus_env.tasks import get_task

    names: set[str] = set()
    stack: list[Any] = [scenario.get("artifacts"), scenario.get("references")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            names.update(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return "\n".join([catalog, *(c.id for c in get_task(task).checks), *sorted(names)])


@pytest.mark.parametrize("task", [t for t in TASKS if t != "medical_coding"])
def test_answer_key_never_reaches_the_browser_billing(base_url: str, task: str) -> None:
    """Play every record the heuristic would read, then close: no response carries the
    expected finding, labels, variant or answer-key field names."""
    seed = seeds("dev", task)[1]
    env = make(task, split="dev")
    obs = env.reset(seed=seed)
    scenario = env.scenario
    agent = make_agent("heuristic", task, seed=seed)
    agent.reset(obs)
    reads = []
    for _ in range(env.task.api_call_budget):
        action = agent.act(obs)
        if action["action_type"] not in READ_ONLY:
            break
        reads.append(action)
        obs = env.step(action).observation
    env.close()
    assert len(reads) >= 4, f"{task}: the heuristic read only {reads}"
    rec = Recorder(base_url)
    page_load(rec)
    out = rec.post("/reset", {"task_name": task, "split": "dev", "seed": seed}).json()
    eid = out["episode_id"]
    for action in [*reads, {"action_type": "close_case", "parameters": {}}]:
        r = rec.post("/step", {"episode_id": eid, "action": action})
        assert r.status_code == 200, r.text
    assert r.json()["done"] and r.json()["info"]["grade"]
    rec.get(f"/state?episode_id={eid}")
    seen = "\n".join(rec.bodies)
    secrets = secrets_of(scenario, public_words(task, rec.bodies[4], scenario))
    assert len(secrets) >= 5, f"the test must look for something: {secrets}"
    leaked = [s for s in secrets if s in seen]
    assert not leaked, f"{task} seed {seed}: {leaked} reached the browser"


@pytest.mark.parametrize("task", [t for t in TASKS if t != "medical_coding"])
def test_answer_key_stays_out_of_a_full_episode_with_a_wrong_answer(base_url: str,
                                                                     task: str) -> None:
    """A whole episode — records, a filing, counter-arguments, the grade — played with a
    wrong finding (and no free text of the agent's own): no response names the right one."""
    import importlib

    findings = importlib.import_module(f"clarus_env.tasks.{task}.generator").FINDINGS
    seed = seeds("dev", task)[2]
    env = make(task, split="dev")
    obs = env.reset(seed=seed)
    scenario = env.scenario
    exp = scenario["expected"]
    right = {exp.get("finding"), *exp.get("accepted_findings", [])}
    wrong = next(f for f in findings if f not in right)
    agent = make_agent("heuristic", task, seed=seed)
    agent.reset(obs)
    played = []
    for _ in range(env.task.api_call_budget + 5):
        action = agent.act(obs)
        params = {k: v for k, v in action.get("parameters", {}).items()
                  if k not in ("summary", "body", "message", "rationale")}
        if action["action_type"] == "write_diagnosis":
            params["finding"] = wrong
        if action["action_type"] in ("send_patient_communication", "notify_provider",
                                     "write_audit_entry"):
            params["message" if "message" in action["parameters"] else "summary"] = "noted"
        action = {"action_type": action["action_type"], "parameters": params}
        res = env.step(action)
        played.append(action)
        obs = res.observation
        if res.done:
            break
    env.close()
    assert res.done and any(a["action_type"] == "write_diagnosis" for a in played)
    rec = Recorder(base_url)
    page_load(rec)
    eid = rec.post("/reset", {"task_name": task, "split": "dev", "seed": seed}).json()[
        "episode_id"]
    for action in played:
        assert rec.post("/step", {"episode_id": eid, "action": action}).status_code == 200
    assert '"grade"' in rec.bodies[-1]
    secrets = [s for s in secrets_of(scenario, public_words(task, rec.bodies[4], scenario))
               if s != wrong]
    assert any(s in right for s in secrets), "the right finding must be among the searched"
    leaked = [s for s in secrets if s in "\n".join(rec.bodies)]
    assert not leaked, f"{task} seed {seed}: {leaked} reached the browser"


def test_answer_key_never_reaches_the_browser_coding(base_url: str) -> None:
    task = "medical_coding"
    seed = seeds("dev", task)[1]
    env = make(task, split="dev")
    env.reset(seed=seed)
    scenario = env.scenario
    env.close()
    rec = Recorder(base_url)
    page_load(rec)
    out = rec.post("/reset", {"task_name": task, "split": "dev", "seed": seed}).json()
    eid = out["episode_id"]
    wrong = {"primary_icd10": "Z00.00", "secondary_icd10s": [], "cpt_codes": ["99499"]}
    for _ in range(3):
        r = rec.post("/step", {"episode_id": eid, "action": {"action_type": "submit_codes",
                                                             "parameters": wrong}})
        assert r.status_code == 200, r.text
    assert r.json()["done"]
    static = "\n".join(rec.bodies[:5])  # the page and its catalog: examples like "99213-25"
    secrets = [s for s in secrets_of(scenario, "") if s not in ("Z00.00", "99499")
               and s not in static]
    seen = "\n".join(rec.bodies)
    assert secrets
    leaked = [s for s in secrets if s in seen]
    assert not leaked, f"seed {seed}: expected codes {leaked} reached the browser"


def test_catalog_forms_are_the_action_schema_files(base_url: str) -> None:
    cat = httpx.get(f"{base_url}/web/api/catalog").json()
    assert [t["name"] for t in cat["tasks"]] == list(TASKS)
    for t in cat["tasks"]:
        for a in t["actions"]:
            on_disk = json.loads((SCHEMA_DIR / "actions" / f"{a['name']}.schema.json").read_text())
            assert a["schema"] == on_disk
        for split, r in t["splits"].items():
            assert range(r["first"], r["first"] + r["count"]) == seeds(split, t["name"])
        names = {a["name"] for a in t["actions"]}
        if t["name"] == "medical_coding":
            assert names == {"submit_codes", "search_icd10", "search_cpt", "get_icd10"}
        else:
            assert len(names) == 19 and "close_case" in names


def test_page_loads_nothing_from_another_host() -> None:
    """Offline: no URL with a scheme or protocol-relative '//' in the page's own files."""
    for path in WEB.iterdir():
        text = path.read_text()
        for bad in ("http://", "https://", "src=\"//", "href=\"//", "@import"):
            assert bad not in text, f"{path.name} references {bad!r}"


def test_replay_rebuilds_observations_and_grade(base_url: str) -> None:
    task = "deductive_liability"
    seed = seeds("dev", task)[0]
    env = make(task, split="dev")
    obs = env.reset(seed=seed)
    agent = make_agent("random", task, seed=7)
    agent.reset(obs)
    actions, observations, grade = [], [], None
    for _ in range(60):
        a = agent.act(obs)
        res = env.step(a)
        actions.append(a)
        obs = res.observation
        observations.append(obs.model_dump())
        if res.done:
            grade = res.info["grade"]
            break
    env.close()
    r = httpx.post(f"{base_url}/web/api/replay", timeout=60,
                   json={"task": task, "split": "dev", "seed": seed, "actions": actions})
    assert r.status_code == 200
    out = r.json()
    assert [s["observation"] for s in out["steps"]] == observations
    assert out["grade"] == grade
    failed = {c["id"] for c in grade["checks"] if not c["passed"]}
    assert set(out["links"]) <= failed


@pytest.mark.parametrize("body, status, code", [
    ({"task": "nope", "seed": 1, "actions": []}, 404, "unknown_task"),
    ({"task": "deductive_liability", "split": "prod", "seed": 1, "actions": []}, 400,
     "invalid_split"),
    ({"task": "deductive_liability", "seed": "1", "actions": []}, 422, "invalid_request"),
    ({"task": "deductive_liability", "seed": 1, "actions": [{}] * 500}, 422, "invalid_request"),
])
def test_replay_refuses_bad_requests_with_a_reason(base_url: str, body: dict[str, Any],
                                                   status: int, code: str) -> None:
    r = httpx.post(f"{base_url}/web/api/replay", json=body, timeout=30)
    assert r.status_code == status
    assert r.json()["code"] == code and r.json()["message"]


def test_replay_of_malformed_actions_is_graded_not_a_500(base_url: str) -> None:
    r = httpx.post(f"{base_url}/web/api/replay", timeout=60, json={
        "task": "abductive_conflict", "seed": seeds("dev", "abductive_conflict")[0],
        "actions": ["close_case", {"action_type": 3}, {"action_type": "close_case"}]})
    assert r.status_code == 200
    out = r.json()
    assert out["grade"] is not None
    assert out["steps"][0]["observation"]["last_action_error"]


def test_check_links_point_at_the_step_that_would_satisfy_the_check() -> None:
    actions = [{"action_type": "fetch_eob", "parameters": {"claim_id": "C"}},
               {"action_type": "authenticate_patient", "parameters": {"patient_id": "P"}},
               {"action_type": "fetch_eob", "parameters": {"claim_id": "C"}},
               {"action_type": "fetch_eob", "parameters": {"claim_id": "C"}},
               {"action_type": "submit_resolution", "parameters": {}},
               {"action_type": "close_case", "parameters": {}}]
    grade = {"checks": [{"id": i, "passed": False} for i in (
        "authenticated_before_phi", "no_compliance_violation", "no_excess_duplicates",
        "deadline_before_submit", "diagnosis_written", "case_closed", "mystery_check")]
        + [{"id": "eob_fetched", "passed": True}]}
    links = check_links("deductive_liability", actions, grade)
    assert links == {
        "authenticated_before_phi": {"step": 2, "action": "authenticate_patient"},
        "no_compliance_violation": {"step": 1, "action": "fetch_eob"},  # PHI before auth
        "no_excess_duplicates": {"step": 4, "action": "fetch_eob"},  # the excess repeat
        "deadline_before_submit": {"step": 5, "action": "submit_resolution"},
        "diagnosis_written": {"step": None, "action": "write_diagnosis"},
        "case_closed": {"step": 6, "action": "close_case"},
    }
    coding = check_links("medical_coding", [
        {"action_type": "search_icd10", "parameters": {"query": "x"}},
        {"action_type": "submit_codes", "parameters": {}},
        {"action_type": "submit_codes", "parameters": {}}],
        {"checks": [{"id": "case_2_hard", "passed": False},
                    {"id": "case_3_easy", "passed": False}]})
    assert coding == {"case_2_hard": {"step": 3, "action": "submit_codes"},
                      "case_3_easy": {"step": None, "action": "submit_codes"}}
