"""The medical-coding runtime: three notes per episode, ``submit_codes`` graded on the spot.

Same API as the billing env (``reset``/``step``/``state``, ``info["grade"]`` at the end) so
the agents, ``clarus eval`` and the server treat all four tasks alike. Lookups
(``search_icd10``, ``search_cpt``, ``get_icd10``) use the real code sets and cost budget;
only ``submit_codes`` is graded, and its reward is the deterministic score in [0, 1].
An invalid action (unknown type, bad parameters, a code not in the code set) costs one budget
call and -0.02, like an invalid billing action, and changes nothing else; ``step()`` before
``reset()`` returns an observation whose ``last_action_error`` says so instead of raising.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import CODING_ACTIONS, ActionError, validate
from .env import StepResult
from .env_base import EnvBase

LOOKUP_RESULTS = 10
R_ERROR = -0.02  # an invalid action, as in the billing env
NO_EPISODE = "no episode: call reset() first"


@dataclass
class CodingObservation:
    task_name: str
    step_number: int
    api_calls_used: int
    api_call_budget: int
    patient_age: int | None
    patient_sex: str | None
    clinical_note: str
    feedback: str
    remaining_tasks: int
    last_action_type: str | None
    last_action_result: dict[str, Any] | None
    last_action_error: str | None
    step_reward: float
    done: bool

    def model_dump(self) -> dict[str, Any]:
        return dict(self.__dict__)  # shallow, like the billing observation

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


class CodingEnv(EnvBase):
    """``clarus_env.make("medical_coding")``."""

    def __init__(self, task: str = "medical_coding", **kwargs: Any) -> None:
        super().__init__(task, **kwargs)

    def reset(self, seed: int | None = None, *, scenario: dict[str, Any] | None = None
              ) -> CodingObservation:
        self._begin(seed, scenario)
        self._case = 0
        self._steps = 0
        self._calls = 0
        self._rewards: list[float] = []
        self._breakdowns: list[dict[str, Any]] = []
        self._feedback = ""
        self._done = False
        self._grade: dict[str, Any] | None = None
        return self._observation(None, None, None, 0.0)

    @property
    def state(self) -> dict[str, Any]:
        return {"episode_id": getattr(self, "episode_id", None), "task": self.task_name,
                "seed": getattr(self, "seed", None), "step_count": self._steps,
                "done": self._done, "score": self._grade["score"] if self._grade else None}

    def close(self) -> None:
        self.scenario = None

    def step(self, action: Any) -> StepResult:
        if self.scenario is None:
            # nothing to charge or count: say so instead of raising
            obs = CodingObservation(
                task_name=self.task_name, step_number=0, api_calls_used=0,
                api_call_budget=self.task.api_call_budget, patient_age=None, patient_sex=None,
                clinical_note="", feedback="", remaining_tasks=0, last_action_type=_name(action),
                last_action_result=None, last_action_error=NO_EPISODE, step_reward=0.0,
                done=True)
            return StepResult(obs, 0.0, True, {"episode_id": None, "error": NO_EPISODE})
        if self._done:
            obs = self._observation(_name(action), None, "the episode is done; call reset() "
                                    "to start another", 0.0)
            return StepResult(obs, 0.0, True, self._info())
        self._steps += 1
        self._calls += 1
        name, result, error, reward = _name(action), None, None, 0.0
        try:
            name, params = validate(action, CODING_ACTIONS)
            result, reward = getattr(self, "_do_" + name)(params)
        except ActionError as exc:
            error = str(exc)
            reward = R_ERROR  # like the billing env: the call costs budget and a penalty
        if not self._done and self._calls >= self.task.api_call_budget:
            self._finish("API call budget exhausted")
        return StepResult(self._observation(name, result, error, reward), reward, self._done,
                          self._info())

    # -- actions --------------------------------------------------------------------------
    def _do_submit_codes(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        from .tasks.medical_coding.reward import feedback_text, score_submission

        case = self.scenario["cases"][self._case]  # type: ignore[index]
        reward, breakdown = score_submission(case["expected"], p, self.reference,
                                             case.get("accept"))
        self._rewards.append(reward)
        self._breakdowns.append(breakdown)
        self._feedback = feedback_text(breakdown)
        self._case += 1
        if self._case == len(self.scenario["cases"]):  # type: ignore[arg-type]
            self._finish("all cases coded")
        return {"case_reward": reward, "cases_done": self._case}, reward

    def _do_search_icd10(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        from .tasks.medical_coding.search import search_icd10

        return {"query": p["query"],
                "results": search_icd10(self.reference, p["query"], LOOKUP_RESULTS)}, 0.0

    def _do_search_cpt(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        from .tasks.medical_coding.search import search_cpt

        return {"query": p["query"],
                "results": search_cpt(self.reference, p["query"], LOOKUP_RESULTS)}, 0.0

    def _do_get_icd10(self, p: dict[str, Any]) -> tuple[dict[str, Any], float]:
        from .tasks.medical_coding.search import get_icd10

        node = get_icd10(self.reference, p["code"])
        if node is None:
            raise ActionError(f"get_icd10.code {p['code']!r} is not in the ICD-10-CM code set")
        return node, 0.0

    # -- bookkeeping ----------------------------------------------------------------------
    def _finish(self, why: str) -> None:
        self._done = True
        cases = self.scenario["cases"]  # type: ignore[index]
        rewards = self._rewards + [0.0] * (len(cases) - len(self._rewards))
        checks = []
        for i, case in enumerate(cases):
            done = i < len(self._rewards)
            checks.append({
                "id": f"case_{i + 1}_{case['difficulty']}",
                "description": f"{case['difficulty']} case coded exactly",
                "passed": done and rewards[i] == 1.0,
                "detail": (f"reward {rewards[i]:.3f}" if done else "not submitted")})
        self._grade = {"score": round(sum(rewards) / len(cases), 6),
                       "passed": sum(c["passed"] for c in checks), "total": len(cases),
                       "checks": checks, "ended_by": why,
                       "cases": [{"difficulty": c["difficulty"], "reward": r,
                                  "breakdown": b} for c, r, b in
                                 zip(cases, rewards, self._breakdowns + [None] * 3,
                                     strict=False)]}

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"episode_id": self.episode_id,
                                "api_calls_remaining": self.task.api_call_budget - self._calls}
        if self._grade is not None:
            info["grade"] = self._grade
        return info

    def _observation(self, name: str | None, result: dict[str, Any] | None, error: str | None,
                     reward: float) -> CodingObservation:
        cases = self.scenario["cases"]  # type: ignore[index]
        current = cases[self._case] if self._case < len(cases) else None
        return CodingObservation(
            task_name=self.task_name, step_number=self._steps, api_calls_used=self._calls,
            api_call_budget=self.task.api_call_budget,
            patient_age=current["patient_age"] if current else None,
            patient_sex=current["patient_sex"] if current else None,
            clinical_note=current["clinical_note"] if current else "",
            feedback=self._feedback, remaining_tasks=len(cases) - self._case,
            last_action_type=name, last_action_result=result, last_action_error=error,
            step_reward=round(reward, 6), done=self._done)


def _name(action: Any) -> str | None:
    if isinstance(action, dict) and isinstance(action.get("action_type"), str):
        return action["action_type"][:64]
    return None
