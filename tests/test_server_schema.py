"""``GET /schema`` describes every task's traffic at the top level, per task under ``tasks``,
and still holds every key (and accepts every message) earlier clients relied on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from clarus_env.scenario_store import load_scenario
from clarus_env.server.app import bundled, create_app
from clarus_env.splits import seeds
from clarus_env.tasks import TASKS, get_task


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(warm=False)) as c:
        yield c


@pytest.fixture(scope="module")
def schemas(client: TestClient) -> dict[str, Any]:
    r = client.get("/schema")
    assert r.status_code == 200
    return r.json()


def valid(instance: Any, schema: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


def test_every_schema_is_a_draft_2020_12_schema(schemas: dict[str, Any]) -> None:
    docs = [schemas["action"], schemas["observation"], schemas["state"],
            schemas["medical_coding"]["action"], schemas["medical_coding"]["observation"]]
    assert set(schemas["tasks"]) == set(TASKS)
    for task in TASKS:
        docs += [schemas["tasks"][task]["action"], schemas["tasks"][task]["observation"]]
    for doc in docs:
        jsonschema.Draft202012Validator.check_schema(doc)


def play(client: TestClient, task: str, seed: int) -> Iterator[tuple[str, Any]]:
    """("action"|"observation"|"state", value) for one oracle episode over HTTP."""
    eid = f"schema-{task}-{seed}"
    reset = client.post("/reset", json={"task_name": task, "seed": seed, "episode_id": eid})
    assert reset.status_code == 200, reset.text
    yield "observation", reset.json()["observation"]
    for action in get_task(task).oracle(load_scenario(task, seed)):
        yield "action", action
        step = client.post("/step", json={"episode_id": eid, "action": action})
        assert step.status_code == 200, step.text
        yield "observation", step.json()["observation"]
    yield "state", client.get("/state", params={"episode_id": eid}).json()
    client.delete(f"/episodes/{eid}")


@pytest.mark.parametrize("task", TASKS)
def test_top_level_and_per_task_schemas_describe_real_traffic(client: TestClient,
                                                              schemas: dict[str, Any],
                                                              task: str) -> None:
    own = schemas["tasks"][task]
    assert own["kind"] == getattr(get_task(task), "kind", "billing")
    seen = set()
    for kind, value in play(client, task, seeds("dev", task)[0]):
        seen.add(kind)
        if kind == "state":
            assert valid(value, schemas["state"]), value
            continue
        assert valid(value, schemas[kind]), (kind, value)  # the top level: any task
        assert valid(value, own[kind]), (kind, value)  # this task's own
    assert seen == {"action", "observation", "state"}


def test_per_task_schemas_tell_the_kinds_apart(client: TestClient,
                                               schemas: dict[str, Any]) -> None:
    billing_action = next(iter(get_task("deductive_liability").oracle(
        load_scenario("deductive_liability", seeds("dev", "deductive_liability")[0]))))
    coding_action = next(iter(get_task("medical_coding").oracle(
        load_scenario("medical_coding", seeds("dev", "medical_coding")[0]))))
    tasks = schemas["tasks"]
    assert not valid(billing_action, tasks["medical_coding"]["action"])
    assert not valid(coding_action, tasks["deductive_liability"]["action"])
    coding_obs = client.post("/reset", json={"task_name": "medical_coding", "seed": 1001,
                                             "episode_id": "kinds"}).json()["observation"]
    client.delete("/episodes/kinds")
    assert valid(coding_obs, schemas["observation"])
    assert not valid(coding_obs, tasks["abductive_conflict"]["observation"])
    # the top level is still strict about what no task accepts
    assert not valid({"action_type": "teleport", "parameters": {}}, schemas["action"])
    assert not valid({**billing_action, "extra": 1}, schemas["action"])
    assert not valid({"action_type": "submit_codes", "parameters": {"primary_icd10": 7}},
                     schemas["action"])


def test_earlier_clients_keep_their_keys_and_messages(schemas: dict[str, Any]) -> None:
    """The former top level was billing-only: whatever it accepted is still accepted, and
    the ``medical_coding`` pair and ``state`` are unchanged."""
    assert schemas["medical_coding"] == {"action": bundled("coding_action.schema.json"),
                                         "observation": bundled("coding_observation.schema.json")}
    assert schemas["tasks"]["medical_coding"]["action"] == schemas["medical_coding"]["action"]
    former = bundled("action.schema.json")
    for task in ("deductive_liability", "abductive_conflict", "adversarial_fabrication"):
        assert schemas["tasks"][task]["action"] == former
        assert schemas["tasks"][task]["observation"] == bundled("observation.schema.json")
        for action in get_task(task).oracle(load_scenario(task, seeds("dev", task)[0])):
            assert valid(action, former) and valid(action, schemas["action"])
    assert set(former["properties"]["action_type"]["enum"]) < set(
        schemas["action"]["properties"]["action_type"]["enum"])
