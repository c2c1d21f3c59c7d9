"""Clarus as a TRL ``environment_factory``: ``GRPOTrainer(environment_factory=...)``.

TRL (1.16) builds one instance per rollout with no arguments (and pools them: an instance is
reset again for later batches), calls ``reset(**row)`` with the dataset row (``task_name``,
``seed`` and ``split`` columns are honoured, the rest ignored) and appends the text it returns
to the last user message; every other public function of the class except ``get_reward``
becomes a tool whose schema transformers' ``get_json_schema`` reads from the type hints and
the Google-style docstring. So the class exposes exactly one public method per action of its
task, plus ``reset`` and ``get_reward`` — TRL's hook for an environment that owns its reward:
it is called once per finished rollout and logged under the class name, so no reward function
is needed::

    from clarus_env.trl_adapter import make_trl_env

    trainer = GRPOTrainer(model=..., train_dataset=dataset,  # columns: prompt, seed
                          environment_factory=make_trl_env("deductive_liability"))

Reward functions can still read the episode from ``environments`` (``reward``, ``score``,
``done``, ``actions``...), e.g. to log outcome accuracy. Methods are generated from
``clarus_env.actions`` (the specs the runtime validates against), so tools, runtime and JSON
Schemas cannot drift apart. The episode runs in-process, or on a Clarus server when
``CLARUS_ENV_URL`` (or the class attribute ``env_url``) is set.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any, ClassVar

from .actions import ACTIONS, CODING_ACTIONS, ActionSpec, Param
from .llm_agent import render_observation, system_prompt
from .tasks import BILLING_TASKS, get_task

DEFAULT_TASK_ENV = "CLARUS_TASK"
ENV_URL_ENV = "CLARUS_ENV_URL"
DEFAULT_TASK = "deductive_liability"

# What each parameter means, for parameters whose spec carries no description (TRL requires a
# description for every argument).
PARAM_DOCS = {
    "patient_id": "The patient's id (the observation's case_id).",
    "claim_id": "The claim id, from the complaint or an earlier record.",
    "plan_id": "The plan id, from the EOB or claim record.",
    "facility_id": "The facility id, from an earlier record.",
    "code": "A CPT/HCPCS code, e.g. 99213.",
    "paired_code": "A second code, to look up the NCCI edit for the pair.",
    "code_1": "First code of an NCCI pair (needed for rule ncci_ptp).",
    "code_2": "Second code of an NCCI pair (needed for rule ncci_ptp).",
    "rule": "The regulation to look up.",
    "deadline_type": "Which filing deadline to compute.",
    "responsible_party": "Who is responsible for the error.",
    "finding": "The error found.",
    "amount": "Dollar amount at issue, to the cent (e.g. 73.14).",
    "cited_artifacts": "Artifact ids returned by earlier actions that support this.",
    "summary": "A short plain-language summary.",
    "resolution_type": "The kind of filing.",
    "appeal_reason": "The ground of the appeal or dispute.",
    "body": "The text of the filing.",
    "message": "The message text.",
    "message_type": "The kind of message.",
    "position": "Maintain or withdraw the dispute.",
    "counter_id": "The id of the counter-argument being answered.",
    "rationale": "Why the counter-argument is rejected (or conceded).",
    "decision": "Reject (default) or concede the counter-argument.",
    "query": "Words describing the condition or procedure.",
}
_TYPES: dict[str, Any] = {"string": str, "string_list": list[str], "money": float,
                          "boolean": bool, "integer": int}


def _param_doc(p: Param, choices: tuple[str, ...] | None) -> str:
    desc = " ".join((p.description or PARAM_DOCS.get(p.name) or p.name.replace("_", " ")).split())
    if choices:  # transformers' get_json_schema turns this suffix into a JSON Schema enum
        desc += f" (choices: {json.dumps(list(choices))})"
    return desc


def _docstring(spec: ActionSpec, choices: dict[str, tuple[str, ...]]) -> str:
    lines = [" ".join(spec.description.split())]
    if spec.params:
        lines += ["", "Args:"]
        lines += [f"    {p.name}: {_param_doc(p, choices.get(p.name) or p.enum)}"
                  for p in spec.params]
    lines += ["", "Returns:", "    The observation after the action, as JSON: the action's "
              "result or error, the step reward and whether the episode is done."]
    return "\n".join(lines)


def _tool(spec: ActionSpec, choices: dict[str, tuple[str, ...]]) -> Any:
    """A method ``name(self, <params>) -> str`` with a real signature, hints and docstring."""

    def method(self: Any, *args: Any, **kwargs: Any) -> str:
        bound = sig.bind(self, *args, **kwargs)
        params = {k: v for k, v in bound.arguments.items() if k != "self" and v is not None}
        return self._act(spec.name, params)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    # Required parameters first (Python needs them before defaulted ones); TRL calls tools
    # with keyword arguments, so the order is only cosmetic.
    for p in sorted(spec.params, key=lambda p: not p.required):
        hint = _TYPES[p.type] if p.required else _TYPES[p.type] | None
        annotations[p.name] = hint
        parameters.append(inspect.Parameter(
            p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hint,
            default=inspect.Parameter.empty if p.required else None))
    annotations["return"] = str
    sig = inspect.Signature(parameters, return_annotation=str)
    method.__signature__ = sig  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__name__ = method.__qualname__ = spec.name
    method.__doc__ = _docstring(spec, choices)
    return method


class _ClarusTRLBase:
    """The shared episode logic. Public state for reward functions:

    ``reward`` — the episode's return so far (step rewards; the final step adds the graded
    score), ``last_reward`` — the latest step's reward, ``score`` — the graded score once the
    episode is done (else None), ``done``, ``steps``, ``observation`` (the latest, a dict),
    ``task`` and ``seed`` (what ``reset`` played), ``actions`` (the actions taken, as
    ``{"action_type", "parameters"}`` dicts — a rollout can be replayed from them) and
    ``grade`` (the grader's full verdict once done: checks, passed/total, outcome_correct).
    """

    task_name: ClassVar[str | None] = None
    tasks: ClassVar[tuple[str, ...]] = ()
    split: ClassVar[str] = "train"
    env_url: ClassVar[str | None] = None

    def __init__(self) -> None:
        self._env: Any = None
        self._task: str | None = None
        self.task: str | None = None
        self.seed: int | None = None
        self.actions: list[dict[str, Any]] = []
        self.reward = 0.0
        self.last_reward = 0.0
        self.score: float | None = None
        self.grade: dict[str, Any] | None = None
        self.done = False
        self.steps = 0
        self.observation: dict[str, Any] | None = None

    def reset(self, **kwargs: Any) -> str:
        """Start an episode; returns the task brief and the first observation as text."""
        task = kwargs.get("task_name") or self._default_task()
        if task not in self.tasks:
            raise ValueError(f"{type(self).__name__} plays {', '.join(self.tasks)}; got task "
                             f"{task!r} (use make_trl_env({task!r}))")
        seed = kwargs.get("seed")
        if self._env is None:
            url = self.env_url or os.environ.get(ENV_URL_ENV)
            if url:
                from .client import ClarusClient

                self._env = ClarusClient(url)
            else:
                from .client import InProcessClient

                self._env = InProcessClient()
        obs = self._env.reset(task_name=task, seed=None if seed is None else int(seed),
                              split=kwargs.get("split") or self.split)
        self._task = self.task = task
        self.seed = None if seed is None else int(seed)
        self.actions = []
        self.reward, self.last_reward, self.score, self.grade = 0.0, 0.0, None, None
        self.done, self.steps, self.observation = False, 0, obs
        return (system_prompt(task) + "\n\nThe episode starts. Observation:\n"
                + render_observation(obs))

    def get_reward(self) -> float:
        """The episode's return, for TRL, which calls this once per finished rollout."""
        return self.reward

    def _default_task(self) -> str:
        return self.task_name or os.environ.get(DEFAULT_TASK_ENV) or self.tasks[0]

    def _act(self, name: str, params: dict[str, Any]) -> str:
        if self._env is None or self._task is None:
            raise ValueError("no episode: reset() has not been called")
        if self.done:
            raise ValueError(f"The episode is over (score {self.score}); no more actions.")
        action = {"action_type": name, "parameters": params}
        res = self._env.step(action)
        self.actions.append(action)
        self.steps += 1
        self.last_reward = float(res["reward"])
        self.reward = round(self.reward + self.last_reward, 6)
        self.done = bool(res["done"])
        self.observation = res["observation"]
        grade = (res.get("info") or {}).get("grade")
        if self.done and grade is not None:
            self.score, self.grade = float(grade["score"]), grade
        return render_observation(res["observation"], full=False)


def _build(name: str, specs: dict[str, ActionSpec], tasks: tuple[str, ...],
           task_name: str | None, base: type = _ClarusTRLBase) -> type:
    choices: dict[str, tuple[str, ...]] = {}
    if task_name in BILLING_TASKS:
        t = get_task(task_name)
        choices = {"finding": t.findings, "appeal_reason": t.appeal_reasons}
    ns: dict[str, Any] = {spec.name: _tool(spec, choices) for spec in specs.values()}
    ns.update(task_name=task_name, tasks=tasks, __module__=__name__,
              __doc__=f"Clarus {task_name or ' / '.join(tasks)} as a TRL environment: one "
                      f"tool per action. {(base.__doc__ or '').strip()}")
    return type(name, (base,), ns)


ClarusTRLEnv: type = _build("ClarusTRLEnv", ACTIONS, BILLING_TASKS, None)
"""The billing arena; the task comes from the row's ``task_name``, else ``CLARUS_TASK``, else
deductive_liability."""
CodingTRLEnv: type = _build("CodingTRLEnv", CODING_ACTIONS, ("medical_coding",),
                            "medical_coding")


def make_trl_env(task: str) -> type:
    """A class for ``environment_factory`` bound to ``task`` (its tools list the task's own
    finding and appeal-reason vocabulary)."""
    get_task(task)  # unknown tasks fail here, not inside the trainer
    if task == "medical_coding":
        return CodingTRLEnv
    return _build("ClarusTRLEnv_" + task, ACTIONS, (task,), task, base=ClarusTRLEnv)
