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

import asyncio
import inspect
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
from .tasks.base import vocabulary_text

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
    vocab = t.vocabulary()
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
        f"write_diagnosis.finding must be one of: {vocabulary_text(vocab['finding'])}.",
    ]
    if t.appeal_reasons:
        lines.append(f"draft_resolution.appeal_reason, when used, must be one of: "
                     f"{vocabulary_text(vocab['appeal_reason'])}.")
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

        return openai.OpenAI(base_url=self.base_url, api_key=self._key(),
                             timeout=self.timeout_s, max_retries=self.max_retries)

    def async_client(self) -> Any:
        """An ``openai.AsyncOpenAI`` client for concurrent episodes. Its retry loop backs off
        exponentially with jitter on 408/409/429/5xx, timeouts and dropped connections, and
        waits what the server's ``Retry-After`` (or ``retry-after-ms``) asks for when it says
        (up to a minute), so a rate-limited endpoint is not hammered."""
        import openai

        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self._key(),
                                  timeout=self.timeout_s, max_retries=self.max_retries)

    def _key(self) -> str:
        key = self.api_key
        if not key:
            host = urlparse(self.base_url).hostname or ""
            if host not in ("127.0.0.1", "localhost", "::1"):
                raise ValueError("no API key: set HF_TOKEN or OPENAI_API_KEY, or pass "
                                 "--api-key (only a loopback endpoint may go without one)")
            key = "not-needed"  # local servers (vLLM, llama.cpp) ignore it; the SDK wants one
        return key


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


def _complete(chat: Any, **body: Any) -> Any:
    """One chat completion. On an ``openai`` client, the request goes through the client's
    ``post`` (same retries, timeouts and typed reply) rather than ``chat.completions.create``,
    whose walk over the typed request — 19 tool schemas and the whole conversation — cost
    ~14 ms of CPU per request and capped how many episodes one core could keep in flight."""
    import openai

    if isinstance(chat, openai.OpenAI | openai.AsyncOpenAI):
        from openai.types.chat import ChatCompletion

        return chat.post("/chat/completions", cast_to=ChatCompletion, body=body)
    return chat.chat.completions.create(**body)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass
class Usage:
    """Tokens the endpoint says it used (its ``usage`` fields), summed over requests."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, resp: Any) -> None:
        self.requests += 1
        u = getattr(resp, "usage", None)
        if u is not None:
            self.prompt_tokens += int(getattr(u, "prompt_tokens", 0) or 0)
            self.completion_tokens += int(getattr(u, "completion_tokens", 0) or 0)

    def as_dict(self) -> dict[str, int]:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


async def play_episode_async(env: Any, chat: Any, cfg: LLMConfig, task: str, seed: int, *,
                             trial: int = 0, split: str | None = None,
                             emit: Callable[[str], None] = print,
                             in_thread: bool = False) -> dict[str, Any]:
    """One episode. ``chat`` is an ``openai.AsyncOpenAI`` (or the blocking ``openai.OpenAI``,
    awaited trivially); ``env`` a ``ClarusClient`` or ``InProcessClient``, whose calls run in a
    thread when ``in_thread`` (a remote server's round trip must not stall the other episodes).
    Returns the episode record ``clarus regrade`` reads."""

    async def env_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if in_thread:
            return await asyncio.to_thread(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    obs = await env_call(env.reset, task_name=task, seed=seed, split=split)
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
    usage = Usage()
    emit(start_line(task, cfg.model))

    async def play(action: Any) -> dict[str, Any]:
        nonlocal done, info
        res = await env_call(env.step, action)
        actions.append(action)
        rewards.append(float(res["reward"]))
        done, info = bool(res["done"]), res.get("info") or {}
        emit(step_line(len(actions), action, res["reward"], done,
                       res["observation"].get("last_action_error")))
        return res

    while not done and len(actions) < budget + 5:
        try:
            resp = await _maybe_await(_complete(chat, model=cfg.model, messages=messages,
                                                tools=tools, tool_choice="auto",
                                                temperature=cfg.temperature,
                                                max_tokens=cfg.max_tokens))
            usage.add(resp)
            msg = resp.choices[0].message
        except Exception as exc:  # the endpoint failed after its retries: score what was done
            agent_error = f"{type(exc).__name__}: {_one_line(str(exc))[:300]}"
            break
        messages.append(_assistant_message(msg))
        if not msg.tool_calls:
            res = await play(dict(NO_TOOL_CALL))
            messages.append({"role": "user", "content": render_observation(
                res["observation"], full=False)
                + "\nNo tool was called: act by calling exactly one tool."})
            continue
        for call in msg.tool_calls:
            if done:
                content = "Not executed: the episode is over."
            else:
                res = await play(to_action(call.function.name, call.function.arguments))
                content = render_observation(res["observation"], full=False)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    if not done:  # like `clarus eval`: an agent that stops or fails is graded where it stands
        await play({"action_type": "close_case", "parameters": {}})
    grade = info.get("grade")
    score = float(grade["score"]) if grade else 0.0
    success = bool(grade) and grade["passed"] == grade["total"]
    emit(end_line(success, len(actions), score, rewards))
    episode: dict[str, Any] = {
        "task": task, "seed": seed, "trial": trial, "agent": f"llm:{cfg.model}",
        "actions": actions, "rewards": rewards, "return": round(sum(rewards), 6),
        "grade": grade, "agent_error": agent_error, "usage": usage.as_dict()}
    scenario = getattr(env, "scenario", None)
    if task == "medical_coding" and scenario is not None:
        from .evaluation import _coding_cases

        episode["cases"] = _coding_cases(scenario, actions, grade)
    return episode


def play_episode(env: Any, chat: Any, cfg: LLMConfig, task: str, seed: int, *,
                 trial: int = 0, split: str | None = None,
                 emit: Callable[[str], None] = print) -> dict[str, Any]:
    """``play_episode_async`` for a caller without an event loop (a blocking client)."""
    return asyncio.run(play_episode_async(env, chat, cfg, task, seed, trial=trial,
                                          split=split, emit=emit))


Key = tuple[str, int, int]  # (task, seed, trial)


def journal_path(out: str) -> str:
    """Where finished episodes are appended as they end, so an interrupted run resumes."""
    return f"{out}.partial.jsonl"


def finished_episodes(out: str | None, agent: str) -> dict[Key, dict[str, Any]]:
    """Episodes a previous run with the same ``--out`` already finished (its results file,
    then its journal of an interrupted run)."""
    if not out:
        return {}
    from .evaluation import RESULTS_FORMAT

    done: dict[Key, dict[str, Any]] = {}
    if os.path.exists(out):
        with open(out) as fh:
            try:
                doc = json.load(fh)
            except ValueError as exc:
                raise ValueError(f"{out}: not a results file to resume ({exc})") from exc
        if doc.get("format") != RESULTS_FORMAT:
            raise ValueError(f"{out}: not a {RESULTS_FORMAT} file, refusing to overwrite it")
        for e in doc.get("episodes", []):
            done[(e["task"], e["seed"], e["trial"])] = e
    jp = journal_path(out)
    if os.path.exists(jp):
        with open(jp) as fh:
            for n, line in enumerate(fh, 1):
                try:
                    e = json.loads(line)
                except ValueError:  # the line a crash cut short: that episode runs again
                    if fh.read().strip():
                        raise ValueError(f"{jp} line {n}: not JSON") from None
                    break
                done[(e["task"], e["seed"], e["trial"])] = e
    other = sorted({e["agent"] for e in done.values()} - {agent})
    if other:
        raise ValueError(f"{out} holds episodes of {', '.join(other)}, not {agent}; "
                         "give another --out")
    return done


async def run_async(cfg: LLMConfig, tasks: Iterable[str], seeds_by_task: dict[str, list[int]],
                    *, split: str, trials: int = 1, url: str | None = None, chat: Any = None,
                    emit: Callable[[str], None] = print, concurrency: int = 1,
                    out: str | None = None,
                    prices: tuple[float, float] | None = None) -> dict[str, Any]:
    """Play every (task, seed, trial), ``concurrency`` episodes at once; episodes already
    finished under ``out`` are kept, not replayed. With more than one at a time each
    episode's lines are printed together when it ends, so they never interleave."""
    from .client import ClarusClient, InProcessClient
    from .evaluation import RESULTS_FORMAT, summarize

    if concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {concurrency}")
    tasks = list(tasks)
    chat = chat or cfg.async_client()
    agent = f"llm:{cfg.model}"
    plan: list[Key] = [(t, s, k) for t in tasks for s in seeds_by_task[t] for k in range(trials)]
    done = finished_episodes(out, agent)
    todo = [key for key in plan if key not in done]
    started = time.perf_counter()
    envs: asyncio.Queue[Any] = asyncio.Queue()
    for _ in range(min(concurrency, len(todo))):
        envs.put_nowait(ClarusClient(url) if url else InProcessClient())
    journal = open(journal_path(out), "a") if out and todo else None  # noqa: SIM115
    sem = asyncio.Semaphore(concurrency)

    async def one(key: Key) -> None:
        async with sem:
            env = await envs.get()
            lines: list[str] = []
            try:
                episode = await play_episode_async(
                    env, chat, cfg, key[0], key[1], trial=key[2], split=split,
                    emit=emit if concurrency == 1 else lines.append, in_thread=url is not None)
            finally:
                envs.put_nowait(env)
            for line in lines:
                emit(line)
            done[key] = episode
            if journal is not None:
                journal.write(json.dumps(episode, sort_keys=True) + "\n")
                journal.flush()

    try:
        await asyncio.gather(*(one(key) for key in todo))
    finally:
        if journal is not None:
            journal.close()
        while not envs.empty():
            envs.get_nowait().close()
    episodes = [done[key] for key in plan]
    total = Usage()
    for e in episodes:
        u = e.get("usage") or {}
        total.requests += u.get("requests", 0)
        total.prompt_tokens += u.get("prompt_tokens", 0)
        total.completion_tokens += u.get("completion_tokens", 0)
    usage: dict[str, Any] = total.as_dict()
    if prices is not None:  # USD per million prompt / completion tokens
        usage["cost_usd"] = round((total.prompt_tokens * prices[0]
                                   + total.completion_tokens * prices[1]) / 1e6, 6)
    return {"format": RESULTS_FORMAT, "version": __version__, "agent": agent,
            "model": cfg.model, "api_base_url": cfg.base_url, "env_url": url,
            "split": split, "trials": trials, "tasks": tasks,
            "seconds": round(time.perf_counter() - started, 3), "resumed": len(plan) - len(todo),
            "usage": usage, "summary": summarize(episodes, trials), "episodes": episodes}


def run(cfg: LLMConfig, tasks: Iterable[str], seeds_by_task: dict[str, list[int]], *,
        split: str, trials: int = 1, url: str | None = None, chat: Any = None,
        emit: Callable[[str], None] = print, concurrency: int = 1, out: str | None = None,
        prices: tuple[float, float] | None = None) -> dict[str, Any]:
    """``run_async`` from blocking code; returns a ``clarus-eval-results`` document."""
    return asyncio.run(run_async(cfg, tasks, seeds_by_task, split=split, trials=trials,
                                 url=url, chat=chat, emit=emit, concurrency=concurrency,
                                 out=out, prices=prices))


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
    prices = None
    if args.price_input is not None or args.price_output is not None:
        prices = (args.price_input or 0.0, args.price_output or 0.0)
    results = run(cfg, tasks, seeds_by_task, split=args.split, trials=args.trials,
                  url=args.url, emit=lambda line: print(line, flush=True),
                  concurrency=args.concurrency, out=args.out, prices=prices)
    print(format_table(results), file=sys.stderr)
    u = results["usage"]
    tally = (f"{u['requests']} requests, {u['prompt_tokens']:,} prompt + "
             f"{u['completion_tokens']:,} completion tokens")
    if "cost_usd" in u:
        tally += f", ${u['cost_usd']:.4f}"
    if results["resumed"]:
        tally += f"; {results['resumed']} episode(s) kept from {args.out}"
    print(tally, file=sys.stderr)
    if args.out:
        dump(results, args.out)
        jp = journal_path(args.out)
        if os.path.exists(jp):  # everything it held is in the results file now
            os.remove(jp)
        print(f"trajectories and grades written to {args.out}", file=sys.stderr)
    return 0
