"""The LLM baseline (``clarus infer``): any OpenAI-compatible chat endpoint plays Clarus tasks
through tool calls, one tool per action of the task.

Each tool's JSON Schema is the action's parameter schema from ``schemas/actions/`` — the same
file the runtime is tested against — so the model is told exactly what the env accepts.
Whatever the model sends is passed to the env as it is: a malformed or unknown tool call
becomes an invalid action that the env penalises and explains, never a crash, and the
trajectory stored is exactly what was played, so ``clarus regrade`` reproduces every grade.

Output: one line per event on stdout, in the seeds' ``inference.py`` format::

    [START] task=<task> env=clarus model=<model>
    [STEP] step=<n> action=<compact JSON> reward=<0.00> done=<true|false> error=<msg|null>
    [END] success=<true|false> steps=<n> score=<0.000> rewards=<r1,r2,...>
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from . import __version__
from .actions import ACTIONS, CODING_ACTIONS
from .schemas import load
from .tasks import get_task

DEFAULT_API_BASE_URL = "https://router.huggingface.co/v1"  # the seed README's defaults
DEFAULT_MODEL = "Qwen/Qwen2.5-72B-Instruct"
ENV_NAME = "clarus"
STATIC_FIELDS = ("task_name", "case_id", "patient_complaint", "patient_name",
                 "rate_limited_tools", "api_call_budget")
NO_TOOL_CALL = {"action_type": None, "parameters": {}}  # what a reply without a tool call plays


# -- what the model is told --------------------------------------------------------------------
def action_specs(task: str) -> dict[str, Any]:
    return CODING_ACTIONS if task == "medical_coding" else ACTIONS


def tool_specs(task: str) -> list[dict[str, Any]]:
    """OpenAI ``tools``: one function per action, parameters = the action's JSON Schema."""
    tools = []
    for name in action_specs(task):
        schema = load(f"actions/{name}.schema.json")
        params = {k: v for k, v in schema.items()
                  if k in ("type", "properties", "required", "additionalProperties")}
        tools.append({"type": "function",
                      "function": {"name": name, "description": schema.get("description", ""),
                                   "parameters": params}})
    return tools


def system_prompt(task: str) -> str:
    t = get_task(task)
    if task == "medical_coding":
        return (
            "You are a certified medical coder working in the Clarus medical_coding arena.\n"
            f"Task: {t.description}\n"
            "Each observation shows the current clinical note (clinical_note), the patient's "
            "age and sex, feedback on your previous submission and remaining_tasks. Use "
            "search_icd10, search_cpt and get_icd10 to look codes up in the real code sets, "
            "then call submit_codes once per note: the first-listed (primary) ICD-10-CM code, "
            "the other ICD-10-CM codes, and CPT/HCPCS codes with modifiers written as "
            "99213-25. Only submit_codes is graded; the episode ends after the last note or "
            f"when the budget of {t.api_call_budget} calls is used up. Call exactly one tool "
            "per turn.")
    lines = [
        "You are a patient advocacy specialist in the Clarus healthcare billing arena. You "
        "act only through the tools, one tool call per turn.",
        f"Task ({task}, {t.difficulty}): {t.description}",
        "How it works: authenticate the patient (patient_id = the observation's case_id) "
        "before reading any record. Fetch records by the ids in the complaint and in earlier "
        "results (claim_id, patient_id, plan_id, facility_id). Every fetched or looked-up "
        "record has an artifact_id; cite those ids (cited_artifacts) in diagnoses, drafts "
        "and rebuttals. Amounts are dollars with cents (e.g. 73.14). draft_resolution "
        "prepares a filing and submit_resolution files the latest draft. close_case ends "
        "the episode and grades it against deterministic checks.",
        f"write_diagnosis.finding must be one of: {', '.join(t.findings)}.",
    ]
    if t.appeal_reasons:
        lines.append(f"draft_resolution.appeal_reason, when used, must be one of: "
                     f"{', '.join(t.appeal_reasons)}.")
    if t.cooldowns:
        lines.append("Rate-limited tools (steps before they can be called again): " + ", ".join(
            f"{k} ({v})" for k, v in t.cooldowns.items()) + ".")
    lines.append(
        f"You have {t.api_call_budget} calls; every call, failed or not, uses one, and the "
        "episode is graded when the budget runs out. Errors cost reward: read "
        "last_action_error and fix the call. Each observation is JSON: last_action_result "
        "holds the record or outcome of your last call, action_log_summary your recent calls, "
        "patient_emotional_state how the patient feels.")
    return "\n".join(lines)


def render_observation(obs: dict[str, Any], *, full: bool = True) -> str:
    """Observation as compact JSON (its step_reward and done say how the step went); after
    the first one the fields that never change, and the running log the conversation already
    holds, are left out to save context."""
    shown = obs if full else {k: v for k, v in obs.items()
                              if k not in STATIC_FIELDS and k != "action_log_summary"}
    return json.dumps(shown, separators=(",", ":"), default=str)


def to_action(name: str | None, arguments: str | None) -> dict[str, Any]:
    """A tool call as an env action, verbatim: arguments that are not a JSON object are passed
    through unparsed so the env rejects them with its own message (and regrade replays it)."""
    raw = arguments if arguments is not None else ""
    try:
        params: Any = json.loads(raw) if raw.strip() else {}
    except (ValueError, TypeError):
        params = raw
    return {"action_type": name, "parameters": params}


# -- log lines ---------------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def start_line(task: str, model: str) -> str:
    return f"[START] task={task} env={ENV_NAME} model={model}"


def step_line(n: int, action: Any, reward: float, done: bool, error: str | None) -> str:
    act = json.dumps(action, separators=(",", ":"), default=str)
    err = "null" if error is None else _one_line(error)
    return (f"[STEP] step={n} action={act} reward={reward:.2f} done={str(done).lower()} "
            f"error={err}")


def end_line(success: bool, steps: int, score: float, rewards: Sequence[float]) -> str:
    return (f"[END] success={str(success).lower()} steps={steps} score={score:.3f} "
            f"rewards={','.join(f'{r:.2f}' for r in rewards)}")


# -- playing -----------------------------------------------------------------------------------
@dataclass
class LLMConfig:
    base_url: str = DEFAULT_API_BASE_URL
    model: str = DEFAULT_MODEL
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 60.0
    max_retries: int = 4

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Environment (API_BASE_URL, MODEL_NAME, HF_TOKEN or OPENAI_API_KEY), then overrides
        that are not None (command-line flags)."""
        cfg = cls(base_url=os.environ.get("API_BASE_URL") or DEFAULT_API_BASE_URL,
                  model=os.environ.get("MODEL_NAME") or DEFAULT_MODEL,
                  api_key=os.environ.get("HF_TOKEN") or os.environ.get("OPENAI_API_KEY"))
        for k, v in overrides.items():
            if v is not None:
                setattr(cfg, k, v)
        return cfg

    def client(self) -> Any:
        """An ``openai.OpenAI`` client; its own retry loop backs off on 408/409/429/5xx,
        timeouts and dropped connections (``max_retries``)."""
        import openai

        key = self.api_key
        if not key:
            host = urlparse(self.base_url).hostname or ""
            if host not in ("127.0.0.1", "localhost", "::1"):
                raise ValueError("no API key: set HF_TOKEN or OPENAI_API_KEY, or pass "
                                 "--api-key (only a loopback endpoint may go without one)")
            key = "not-needed"  # local servers (vLLM, llama.cpp) ignore it; the SDK wants one
        return openai.OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout_s,
                             max_retries=self.max_retries)


def _assistant_message(msg: Any) -> dict[str, Any]:
    # content may be null only alongside tool calls (the chat API's rule)
    out: dict[str, Any] = {"role": "assistant",
                           "content": msg.content or (None if msg.tool_calls else "")}
    if msg.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.function.name,
                                           "arguments": c.function.arguments or ""}}
                             for c in msg.tool_calls]
    return out


def play_episode(env: Any, chat: Any, cfg: LLMConfig, task: str, seed: int, *,
                 trial: int = 0, split: str | None = None,
                 emit: Callable[[str], None] = print) -> dict[str, Any]:
    """One episode: ``env`` is a ``ClarusClient`` or ``InProcessClient``, ``chat`` an
    ``openai.OpenAI``. Returns the episode record ``clarus regrade`` reads."""
    obs = env.reset(task_name=task, seed=seed, split=split)
    budget = int(obs.get("api_call_budget") or get_task(task).api_call_budget)
    tools = tool_specs(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(task)},
        {"role": "user", "content": "The episode starts. Observation:\n"
                                    + render_observation(obs)},
    ]
    actions: list[Any] = []
    rewards: list[float] = []
    info: dict[str, Any] = {}
    done = False
    agent_error: str | None = None
    emit(start_line(task, cfg.model))

    def play(action: Any) -> dict[str, Any]:
        nonlocal done, info
        res = env.step(action)
        actions.append(action)
        rewards.append(float(res["reward"]))
        done, info = bool(res["done"]), res.get("info") or {}
        emit(step_line(len(actions), action, res["reward"], done,
                       res["observation"].get("last_action_error")))
        return res

    while not done and len(actions) < budget + 5:
        try:
            resp = chat.chat.completions.create(
                model=cfg.model, messages=messages, tools=tools, tool_choice="auto",
                temperature=cfg.temperature, max_tokens=cfg.max_tokens)
            msg = resp.choices[0].message
        except Exception as exc:  # the endpoint failed after its retries: score what was done
            agent_error = f"{type(exc).__name__}: {_one_line(str(exc))[:300]}"
            break
        messages.append(_assistant_message(msg))
        if not msg.tool_calls:
            res = play(dict(NO_TOOL_CALL))
            messages.append({"role": "user", "content": render_observation(
                res["observation"], full=False)
                + "\nNo tool was called: act by calling exactly one tool."})
            continue
        for call in msg.tool_calls:
            if done:
                content = "Not executed: the episode is over."
            else:
                res = play(to_action(call.function.name, call.function.arguments))
                content = render_observation(res["observation"], full=False)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    if not done:  # like `clarus eval`: an agent that stops or fails is graded where it stands
        play({"action_type": "close_case", "parameters": {}})
    grade = info.get("grade")
    score = float(grade["score"]) if grade else 0.0
    success = bool(grade) and grade["passed"] == grade["total"]
    emit(end_line(success, len(actions), score, rewards))
    episode: dict[str, Any] = {
        "task": task, "seed": seed, "trial": trial, "agent": f"llm:{cfg.model}",
        "actions": actions, "rewards": rewards, "return": round(sum(rewards), 6),
        "grade": grade, "agent_error": agent_error}
    scenario = getattr(env, "scenario", None)
    if task == "medical_coding" and scenario is not None:
        from .evaluation import _coding_cases

        episode["cases"] = _coding_cases(scenario, actions, grade)
    return episode


def run(cfg: LLMConfig, tasks: Iterable[str], seeds_by_task: dict[str, list[int]], *,
        split: str, trials: int = 1, url: str | None = None, chat: Any = None,
        emit: Callable[[str], None] = print) -> dict[str, Any]:
    """Play every (task, seed, trial); returns a ``clarus-eval-results`` document."""
    from .client import ClarusClient, InProcessClient
    from .evaluation import RESULTS_FORMAT, summarize

    tasks = list(tasks)
    chat = chat or cfg.client()
    started = time.perf_counter()
    episodes = []
    with (ClarusClient(url) if url else InProcessClient()) as env:
        for task in tasks:
            for seed in seeds_by_task[task]:
                for trial in range(trials):
                    episodes.append(play_episode(env, chat, cfg, task, seed, trial=trial,
                                                 split=split, emit=emit))
    return {"format": RESULTS_FORMAT, "version": __version__, "agent": f"llm:{cfg.model}",
            "model": cfg.model, "api_base_url": cfg.base_url, "env_url": url,
            "split": split, "trials": trials, "tasks": tasks,
            "seconds": round(time.perf_counter() - started, 3),
            "summary": summarize(episodes, trials), "episodes": episodes}


def parse_seeds(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    if not out:
        raise ValueError("--seeds needs at least one seed")
    return out


def infer_main(args: Any) -> int:
    """Body of ``clarus infer`` (the parser lives in ``cli.py``)."""
    from .evaluation import ALL_TASKS, dump, format_table
    from .splits import seeds

    tasks = list(ALL_TASKS) if args.task == "all" else [args.task]
    if args.seeds:
        chosen = parse_seeds(args.seeds)
        seeds_by_task = {t: chosen for t in tasks}
    else:
        seeds_by_task = {t: list(seeds(args.split, t))[:args.limit] for t in tasks}
    cfg = LLMConfig.from_env(base_url=args.api_base_url, model=args.model,
                             api_key=args.api_key, temperature=args.temperature,
                             max_tokens=args.max_tokens, timeout_s=args.timeout,
                             max_retries=args.max_retries)
    results = run(cfg, tasks, seeds_by_task, split=args.split, trials=args.trials,
                  url=args.url, emit=lambda line: print(line, flush=True))
    print(format_table(results), file=sys.stderr)
    if args.out:
        dump(results, args.out)
        print(f"trajectories and grades written to {args.out}", file=sys.stderr)
    return 0
