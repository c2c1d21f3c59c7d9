"""The TRL ``environment_factory`` adapter, without TRL: the shape TRL relies on (no-arg
constructor, ``reset(**row) -> str``, one public method per action with type hints and a
Google-style docstring describing every argument, ``get_reward() -> float``, nothing else
public and callable) and full oracle episodes played through its methods."""

from __future__ import annotations

import inspect
import re
import typing

import pytest

from clarus_env.actions import ACTIONS, CODING_ACTIONS
from clarus_env.env import make
from clarus_env.evaluation import outcome_correct
from clarus_env.scenario_store import load_scenario
from clarus_env.tasks import BILLING_TASKS, get_task
from clarus_env.trl_adapter import ClarusTRLEnv, CodingTRLEnv, make_trl_env

from .serverutil import server  # noqa: F401


def public_callables(obj: object) -> set[str]:
    return {n for n, v in inspect.getmembers(obj) if not n.startswith("_") and callable(v)}


def args_section(doc: str) -> dict[str, str]:
    """The ``Args:`` entries the way transformers' get_json_schema parses them."""
    m = re.search(r"\n\s*Args:\n\s*(.*?)[\n\s]*(Returns:|Raises:|\Z)", doc, re.DOTALL)
    if not m:
        return {}
    return dict(re.findall(r"(?:^|\n)\s*(\w+):\s*(.*?)\s*(?=\n\s*\w+:|\Z)", m.group(1),
                           re.DOTALL))


@pytest.mark.parametrize("cls, specs", [(ClarusTRLEnv, ACTIONS),
                                        (make_trl_env("abductive_conflict"), ACTIONS),
                                        (CodingTRLEnv, CODING_ACTIONS)])
def test_shape_trl_relies_on(cls: type, specs: dict) -> None:
    env = cls()  # TRL constructs it with no arguments
    assert public_callables(env) == {"reset", "get_reward", *specs}
    assert typing.get_type_hints(cls.get_reward) == {"return": float}
    assert isinstance(env.reward, float) and env.done is False
    assert inspect.signature(cls.reset).return_annotation in (str, "str")
    for name, spec in specs.items():
        method = getattr(env, name)
        sig = inspect.signature(method)
        hints = typing.get_type_hints(method)
        assert hints.pop("return") is str and sig.return_annotation is str
        assert list(hints) == list(sig.parameters)
        assert {p.name for p in spec.params} == set(sig.parameters)
        for p in spec.params:
            param = sig.parameters[p.name]
            assert param.annotation == hints[p.name]
            assert (param.default is inspect.Parameter.empty) == p.required
            if not p.required:
                assert type(None) in typing.get_args(hints[p.name])
        doc = inspect.getdoc(method)
        assert doc and doc.splitlines()[0].strip()
        described = args_section(doc)
        assert set(described) == set(sig.parameters), name
        assert all(described.values())
        for p in spec.params:
            if p.enum:
                assert f'(choices: ["{p.enum[0]}"' in described[p.name]


def test_bound_classes_carry_the_task_vocabulary() -> None:
    cls = make_trl_env("adversarial_fabrication")
    assert issubclass(cls, ClarusTRLEnv) and cls.task_name == "adversarial_fabrication"
    doc = inspect.getdoc(cls.write_diagnosis)
    assert all(f'"{f}"' in doc for f in get_task("adversarial_fabrication").findings)
    assert "gfe_backdated" in inspect.getdoc(cls.draft_resolution)
    assert make_trl_env("medical_coding") is CodingTRLEnv
    with pytest.raises(KeyError):
        make_trl_env("no_such_task")


def play_oracle(env: object, task: str, seed: int) -> list[str]:
    return [getattr(env, a["action_type"])(**a.get("parameters", {}))
            for a in get_task(task).oracle(load_scenario(task, seed))]


def reference_run(task: str, seed: int) -> tuple[float, float]:
    """(return, score) of the same oracle plan on the plain env."""
    env = make(task)
    env.reset(seed=seed)
    res = [env.step(a) for a in get_task(task).oracle(load_scenario(task, seed))]
    return round(sum(r.reward for r in res), 6), res[-1].info["grade"]["score"]


@pytest.mark.parametrize("task", [*BILLING_TASKS, "medical_coding"])
def test_full_oracle_episode_through_the_methods(task: str) -> None:
    env = make_trl_env(task)()
    intro = env.reset(prompt=[{"role": "user", "content": "go"}], seed=1001)
    assert isinstance(intro, str) and '"step_number":0' in intro and '"expected"' not in intro
    outputs = play_oracle(env, task, 1001)
    assert all(isinstance(o, str) and '"last_action_error":null' in o for o in outputs)
    want_return, want_score = reference_run(task, 1001)
    assert env.done and env.steps == len(outputs)
    assert env.score == want_score and env.reward == pytest.approx(want_return)
    assert env.get_reward() == env.reward and (env.task, env.seed) == (task, 1001)
    assert env.grade is not None and env.grade["score"] == env.score
    assert outcome_correct({"grade": env.grade})  # the oracle's verdict is right
    assert env.actions == [{"action_type": a["action_type"],
                            "parameters": a.get("parameters", {})}
                           for a in get_task(task).oracle(load_scenario(task, 1001))]
    with pytest.raises(ValueError, match="episode is over"):
        if task == "medical_coding":
            env.search_icd10(query="pharyngitis")
        else:
            env.close_case()
    env.reset(seed=1002)  # a new episode on the same instance starts clean
    assert (env.done, env.steps, env.reward, env.score, env.grade) == (False, 0, 0.0, None,
                                                                      None)
    assert (env.actions, env.seed) == ([], 1002)


def test_invalid_arguments_are_feedback_not_crashes() -> None:
    env = ClarusTRLEnv()
    env.reset(task_name="deductive_liability", seed=1001)
    out = env.fetch_eob(claim_id="NOPE")
    assert "no eob found" in out and env.last_reward == -0.02 and not env.done
    out = env.check_regulatory_rule(rule="not_a_rule")
    assert "must be one of" in out


def test_task_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    env = ClarusTRLEnv()
    assert '"task_name":"deductive_liability"' in env.reset(seed=1001)
    assert '"task_name":"abductive_conflict"' in env.reset(task_name="abductive_conflict",
                                                           seed=1001)
    monkeypatch.setenv("CLARUS_TASK", "adversarial_fabrication")
    assert '"task_name":"adversarial_fabrication"' in ClarusTRLEnv().reset(seed=1001)
    with pytest.raises(ValueError, match="make_trl_env"):
        ClarusTRLEnv().reset(task_name="medical_coding", seed=1001)
    bound = make_trl_env("deductive_liability")()
    with pytest.raises(ValueError):
        bound.reset(task_name="abductive_conflict", seed=1001)
    with pytest.raises(ValueError, match="reset"):
        ClarusTRLEnv().close_case()


def test_against_a_server(server: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("CLARUS_ENV_URL", server)
    env = make_trl_env("deductive_liability")()
    env.reset(seed=1001)
    play_oracle(env, "deductive_liability", 1001)
    assert env.done and env.score == reference_run("deductive_liability", 1001)[1]
