"""The tool schemas a model is shown, as TRL's stack extracts them, for every action of every
task: TRL hands each public environment method to transformers, whose ``get_json_schema``
reads the signature and the Google-style docstring. A docstring it rejects or a type it cannot
express fails here, in a second, instead of inside a training run; and the schemas must agree
with the runtime's own action specs and accept what the reference (oracle) agent sends."""

from __future__ import annotations

import inspect
from typing import Any

import jsonschema
import pytest

pytest.importorskip("trl", reason="needs the .[train] extra")
from transformers.utils import get_json_schema  # noqa: E402

from clarus_env.actions import ACTIONS, CODING_ACTIONS, ActionSpec  # noqa: E402
from clarus_env.scenario_store import load_scenario  # noqa: E402
from clarus_env.splits import seeds  # noqa: E402
from clarus_env.tasks import BILLING_TASKS, TASKS, get_task  # noqa: E402
from clarus_env.trl_adapter import make_trl_env  # noqa: E402

# The JSON Schema type each Clarus parameter type must come out as.
WANT_TYPE = {"string": {"type": "string"}, "integer": {"type": "integer"},
             "boolean": {"type": "boolean"}, "money": {"type": "number"},
             "string_list": {"type": "array", "items": {"type": "string"}}}


def trl_tools(cls: type) -> dict[str, Any]:
    """The methods GRPOTrainer turns into tools: it lists the class's functions and keeps the
    public ones other than ``reset`` and ``get_reward`` (trl/trainer/grpo_trainer.py)."""
    env = cls()
    return {name: getattr(env, name)
            for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")}


def specs_of(task: str) -> dict[str, ActionSpec]:
    return CODING_ACTIONS if task == "medical_coding" else ACTIONS


def allowed_values(task: str, spec: ActionSpec, name: str) -> list[str] | None:
    if task in BILLING_TASKS and spec.name == "write_diagnosis" and name == "finding":
        return list(get_task(task).findings)
    if task in BILLING_TASKS and name == "appeal_reason":
        return list(get_task(task).appeal_reasons) or None  # a task without appeals
    enum = spec.by_name[name].enum
    return list(enum) if enum else None


@pytest.mark.parametrize("task", TASKS)
def test_every_action_has_a_schema_transformers_accepts(task: str) -> None:
    tools = trl_tools(make_trl_env(task))
    specs = specs_of(task)
    assert set(tools) == set(specs)
    for name, method in tools.items():
        schema = get_json_schema(method)  # raises on anything transformers cannot express
        fn = schema["function"]
        spec = specs[name]
        assert schema["type"] == "function" and fn["name"] == name
        assert fn["description"] == " ".join(spec.description.split())
        params = fn["parameters"]
        assert params["type"] == "object"
        assert set(params["properties"]) == {p.name for p in spec.params}, name
        assert sorted(params.get("required", [])) == sorted(p.name for p in spec.params
                                                            if p.required), name
        for p in spec.params:
            got = dict(params["properties"][p.name])
            assert got.pop("description").strip(), f"{name}.{p.name} has no description"
            assert got.pop("nullable", False) is (not p.required), f"{name}.{p.name}"
            choices = got.pop("enum", None)
            assert choices == allowed_values(task, spec, p.name), f"{name}.{p.name}"
            assert got == WANT_TYPE[p.type], f"{name}.{p.name}: {got}"


def tool_arguments_schema(method: Any) -> dict[str, Any]:
    """The parameters schema as a validator reads it (``nullable`` is OpenAPI, not JSON
    Schema: an omitted optional argument is how a model leaves it out)."""
    return {**get_json_schema(method)["function"]["parameters"], "additionalProperties": False}


@pytest.mark.parametrize("task", TASKS)
def test_the_reference_agent_s_calls_fit_the_tool_schemas(task: str) -> None:
    """Whatever the oracle sends, a model can send through the schema it is shown, and it is
    graded the same: the oracle's dollar strings become the numbers the schema asks for, and
    the episode played through the tools with them scores what the oracle's own plan does."""
    cls = make_trl_env(task)
    schemas = {name: tool_arguments_schema(m) for name, m in trl_tools(cls).items()}
    for seed in list(seeds("train", task))[:3]:
        as_shown, as_sent = cls(), cls()
        as_shown.reset(seed=seed)
        as_sent.reset(seed=seed)
        for action in get_task(task).oracle(load_scenario(task, seed)):
            name, args = action["action_type"], action.get("parameters", {})
            typed = {k: float(v) if k == "amount" else v for k, v in args.items()}
            jsonschema.validate(typed, schemas[name])
            getattr(as_shown, name)(**typed)
            getattr(as_sent, name)(**args)
        assert as_shown.done and as_shown.score is not None
        assert (as_shown.score, as_shown.reward) == (as_sent.score, as_sent.reward)


def test_bad_arguments_fail_the_schema() -> None:
    """The schemas constrain: an unknown finding or a missing required argument is refused."""
    cls = make_trl_env("deductive_liability")
    schema = tool_arguments_schema(trl_tools(cls)["write_diagnosis"])
    good = {"responsible_party": "provider", "finding": "duplicate_charge",
            "cited_artifacts": ["ART-1"]}
    jsonschema.validate(good, schema)
    for bad in ({**good, "finding": "gfe_backdated"}, {"finding": "duplicate_charge"},
                {**good, "cited_artifacts": "ART-1"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
