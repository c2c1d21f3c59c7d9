"""GRPO on a Clarus server through OpenEnv: a TRL ``rollout_func`` built on openenv-core's
``GenericEnvClient``.

This is the path for training against a remote ``clarus serve`` (or any deployment speaking
OpenEnv's WebSocket protocol) instead of an in-process ``environment_factory``::

    rows = case_rows("http://127.0.0.1:7860", "deductive_liability", train_seeds)
    trainer = GRPOTrainer(model=..., processing_class=tokenizer, args=config,
                          train_dataset=Dataset.from_list(rows), reward_funcs=[env_reward],
                          rollout_func=OpenEnvRollout("http://127.0.0.1:7860",
                                                      "deductive_liability", rows))

Each dataset row's prompt is the case brief the server gave for one train seed. For every
prompt TRL hands it (a group's rollouts share a prompt, so they play the same case), the
rollout opens its own OpenEnv session — one episode per connection, so rollouts never share
state — resets it to that seed, and lets the model call tools turn by turn: each generated
tool call becomes ``env.step``, each observation goes back as a tool message. It returns the
token ids TRL trains on, the sampling log-probabilities, ``env_mask`` (0 on the tool-result
tokens, which are not the model's) and the episode's reward for ``env_reward``. Generation
is plain ``model.generate``, one rollout at a time: simple and exact, slow for big models
(use TRL's vLLM generation helpers there).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import torch
from openenv.core.generic_client import GenericEnvClient
from transformers.utils import get_json_schema
from trl.chat_template_utils import add_response_schema, parse_response

from clarus_env.llm_agent import render_observation, system_prompt
from clarus_env.trl_adapter import make_trl_env


def case_rows(base_url: str, task: str, case_seeds: Sequence[int]) -> list[dict[str, Any]]:
    """Dataset rows whose prompt is the brief the server gives for each seed."""
    rows = []
    with GenericEnvClient(base_url=base_url).sync() as env:
        for seed in case_seeds:
            first = env.reset(task_name=task, seed=int(seed))
            brief = (system_prompt(task) + "\n\nThe episode starts. Observation:\n"
                     + render_observation(first.observation))
            rows.append({"prompt": [{"role": "user", "content": brief}], "task_name": task,
                         "seed": int(seed)})
    return rows


def tool_schemas(task: str) -> list[dict[str, Any]]:
    """The task's tools as JSON schemas: the ones ``make_trl_env`` offers a model in TRL."""
    cls = make_trl_env(task)
    return [get_json_schema(getattr(cls(), name))
            for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
            if not name.startswith("_") and name not in ("reset", "get_reward")]


def env_reward(env_reward: list[float], **_: Any) -> list[float]:
    """The reward function for this path: the episode return the rollout collected."""
    return env_reward


class OpenEnvRollout:
    """A ``rollout_func``: ``__call__(prompts, trainer)`` plays one OpenEnv episode per
    prompt. ``episodes`` keeps what each rollout did (seed, actions, rewards, grade)."""

    def __init__(self, base_url: str, task: str, rows: Sequence[dict[str, Any]],
                 max_turns: int = 30, max_new_tokens: int = 512) -> None:
        self.base_url, self.task = base_url, task
        self.seed_of = {row["prompt"][-1]["content"]: int(row["seed"]) for row in rows}
        self.max_turns, self.max_new_tokens = max_turns, max_new_tokens
        self.tools = tool_schemas(task)
        self.episodes: list[dict[str, Any]] = []

    def __call__(self, prompts: list[list[dict[str, Any]]], trainer: Any) -> dict[str, list]:
        tokenizer = trainer.processing_class
        if getattr(tokenizer, "response_template", None) is None and getattr(
                tokenizer, "response_schema", None) is None:
            add_response_schema(tokenizer)  # TRL's parser for known chat templates
        model = trainer.accelerator.unwrap_model(trainer.model)
        out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs",
                                                "env_mask", "env_reward")}
        for prompt in prompts:
            content = prompt[-1]["content"]
            if content not in self.seed_of:
                raise ValueError("rollout_func got a prompt that is not one of the case rows "
                                 f"it was built with: {content[:80]!r}...")
            episode = self.play(model, tokenizer, prompt, self.seed_of[content],
                                trainer.temperature)
            for k in out:
                out[k].append(episode[k])
            self.episodes.append({k: episode[k] for k in ("seed", "actions", "rewards",
                                                          "env_reward", "done", "grade",
                                                          "episode_id", "prompt_ids",
                                                          "completion_ids")})
        return out

    def play(self, model: Any, tokenizer: Any, prompt: list[dict[str, Any]], seed: int,
             temperature: float) -> dict[str, Any]:
        prompt_ids = tokenizer.apply_chat_template(prompt, tools=self.tools, tokenize=True,
                                                   add_generation_prompt=True,
                                                   return_dict=False)
        completion: list[int] = []
        logprobs: list[float] = []
        mask: list[int] = []
        actions: list[dict[str, Any]] = []
        rewards: list[float] = []
        done = False
        client = GenericEnvClient(base_url=self.base_url)
        with client.sync() as env:
            env.reset(task_name=self.task, seed=seed)
            for _ in range(self.max_turns):
                context = prompt_ids + completion
                new, lps = self.generate(model, tokenizer, context, temperature)
                completion += new
                logprobs += lps
                mask += [1] * len(new)
                reply = parse_response(tokenizer, new, prefix=context, tools=self.tools)
                calls = [c["function"] for c in reply.get("tool_calls") or []]
                if not calls or new[-1:] != [tokenizer.eos_token_id]:
                    break  # an answer without a tool call (or cut short) ends the rollout
                results = []
                for call in calls:
                    action = {"action_type": call["name"],
                              "parameters": call.get("arguments") or {}}
                    res = env.step(action)
                    actions.append(action)
                    rewards.append(float(res.reward or 0.0))
                    results.append({"role": "tool", "name": call["name"],
                                    "content": render_observation(res.observation,
                                                                  full=False)})
                    if res.done:
                        done = True
                        break
                suffix = self.tool_suffix(tokenizer, calls[0]["name"], results)
                completion += suffix
                logprobs += [0.0] * len(suffix)
                mask += [0] * len(suffix)
                if done:
                    break
            state = env.state()
        return {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": logprobs,
                "env_mask": mask, "env_reward": round(sum(rewards), 6), "seed": seed,
                "actions": actions, "rewards": rewards, "done": done,
                "grade": state.get("grade"), "episode_id": state.get("episode_id")}

    def generate(self, model: Any, tokenizer: Any, ids: list[int], temperature: float,
                 ) -> tuple[list[int], list[float]]:
        """Sample one assistant turn; its tokens up to EOS and their log-probabilities."""
        inputs = torch.tensor([ids], device=model.device)
        with torch.no_grad():
            out = model.generate(inputs, attention_mask=torch.ones_like(inputs),
                                 do_sample=True, temperature=temperature,
                                 max_new_tokens=self.max_new_tokens,
                                 eos_token_id=tokenizer.eos_token_id,
                                 pad_token_id=tokenizer.pad_token_id,
                                 return_dict_in_generate=True, output_scores=True)
        scores = model.compute_transition_scores(out.sequences, out.scores,
                                                 normalize_logits=True)[0]
        new = out.sequences[0, len(ids):].tolist()
        if tokenizer.eos_token_id in new:
            new = new[: new.index(tokenizer.eos_token_id) + 1]
        return new, scores[: len(new)].tolist()

    @staticmethod
    def tool_suffix(tokenizer: Any, name: str, results: list[dict[str, Any]]) -> list[int]:
        """Tokens the chat template puts after an assistant tool-call turn: the tool messages
        and the next assistant header (rendered around a stand-in call, cut at its EOS)."""
        head = [{"role": "user", "content": "-"},
                {"role": "assistant", "content": "",
                 "tool_calls": [{"type": "function", "function": {"name": name,
                                                                   "arguments": {}}}]}]
        before = tokenizer.apply_chat_template(head, tokenize=False)
        after = tokenizer.apply_chat_template(head + results, tokenize=False,
                                              add_generation_prompt=True)
        cut = before.rindex(tokenizer.eos_token) + len(tokenizer.eos_token)
        if after[:cut] != before[:cut]:
            raise ValueError("the chat template renders earlier turns differently once tool "
                             "results follow; this rollout needs a prefix-preserving template")
        return tokenizer(after[cut:], add_special_tokens=False)["input_ids"]
