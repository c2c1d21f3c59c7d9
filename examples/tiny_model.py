"""A tiny causal LM and tokenizer built on the spot, for wiring tests of GRPO on Clarus.

Nothing is downloaded: the tokenizer is a byte-level BPE trained (with ``tokenizers``) on the
very text the trainer will render — the tasks' reset prompts and tool schemas through TRL's
Qwen2.5 chat template, which TRL recognises, so it parses tool calls with its own Qwen
response template — and the model is a 2-layer Qwen2 from a config. It proves the plumbing,
not learning: a random model almost never writes a well-formed tool call, so ``nudge`` fits
it briefly on a few of the reference agent's own calls, rendered as the assistant's tool-call
turns. After that it samples tool calls, well-formed or not, and everything downstream —
generation, TRL's response parsing, its tool loop, the environment, the reward — is the real
path a full-size model takes.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
from trl.chat_template_utils import qwen2_5_chat_template

from clarus_env.scenario_store import load_scenario
from clarus_env.tasks import get_task
from clarus_env.trl_adapter import make_trl_env

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def tools_of(env: Any) -> list[Any]:
    """The methods TRL exposes as tools, in its order: the class's public functions but
    ``reset`` and ``get_reward`` (trl/trainer/grpo_trainer.py)."""
    return [getattr(env, name)
            for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
            if not name.startswith("_") and name not in ("reset", "get_reward")]


def rendered_prompts(rows: Sequence[dict[str, Any]], with_reset: bool = True,
                     ) -> list[tuple[list[dict], list[Any], str]]:
    """For each row: the conversation TRL builds (the row's prompt with ``reset``'s text
    appended to the last user message, unless the prompt already holds the case), the
    tools, and the task."""
    out = []
    for row in rows:
        env = make_trl_env(row["task_name"])()
        intro = env.reset(**row) if with_reset else ""
        prompt = [dict(m) for m in row["prompt"]]
        prompt[-1]["content"] += intro
        out.append((prompt, tools_of(env), row["task_name"]))
    return out


def oracle_calls(task: str, seed: int, limit: int = 3) -> list[dict[str, Any]]:
    """A few of the reference agent's calls for a case (first ones and the last), as the
    ``tool_calls`` of an assistant message."""
    plan = get_task(task).oracle(load_scenario(task, seed))
    picked = plan[: limit - 1] + plan[-1:]
    return [{"type": "function", "function": {"name": a["action_type"],
                                              "arguments": a.get("parameters", {})}}
            for a in picked]


def build_tokenizer(rows: Sequence[dict[str, Any]], vocab_size: int = 4096,
                    max_token_length: int | None = 128, with_reset: bool = True,
                    ) -> PreTrainedTokenizerFast:
    """A BPE tokenizer fitted to the rendered prompts, tool calls and tool responses."""
    bpe = Tokenizer(models.BPE())
    # No splitting at spaces or punctuation: merges may span whole phrases, so the schemas and
    # prompts, repeated in every rollout, shrink to a few hundred tokens and a tool call to a
    # handful — short sequences for CPU steps, and well-formed calls easy to sample.
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    bpe.decoder = decoders.ByteLevel()
    probe = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()),
                                    chat_template=qwen2_5_chat_template)
    corpus: list[str] = []
    for (prompt, tools, task), row in zip(rendered_prompts(rows, with_reset), rows,
                                          strict=True):
        calls = oracle_calls(task, int(row["seed"]))
        convo = prompt + [{"role": "assistant", "content": "", "tool_calls": calls},
                          {"role": "tool", "name": calls[0]["function"]["name"],
                           "content": '{"step_reward":0.0,"done":false}'}]
        corpus.append(probe.apply_chat_template(convo, tools=tools, tokenize=False))
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  max_token_length=max_token_length,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    bpe.train_from_iterator(corpus, trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", padding_side="left",
                                  chat_template=qwen2_5_chat_template)
    return tok


def build_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> Qwen2ForCausalLM:
    """A 2-layer Qwen2 with random weights, sized for seconds-long CPU steps."""
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=16384, tie_word_embeddings=True,
                         bos_token_id=None, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    config._attn_implementation = "eager"  # faster than SDPA at these sizes on a CPU
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def nudge(model: Qwen2ForCausalLM, tokenizer: PreTrainedTokenizerFast,
          rows: Sequence[dict[str, Any]], steps: int = 150, lr: float = 3e-3,
          seed: int = 0, with_reset: bool = True) -> list[float]:
    """Fit the model a little on single tool-call turns taken from the reference agent, the
    loss on the assistant turn only; returns the loss per step."""
    rng = random.Random(seed)
    examples: list[tuple[list[int], int]] = []
    for (prompt, tools, task), row in zip(rendered_prompts(rows, with_reset), rows,
                                          strict=True):
        # As in a rollout: the prompt tokenized alone, then the reply's tokens after it.
        head_text = tokenizer.apply_chat_template(prompt, tools=tools, tokenize=False,
                                                  add_generation_prompt=True)
        head = tokenizer(head_text, add_special_tokens=False)["input_ids"]
        for call in oracle_calls(task, int(row["seed"])):
            convo = prompt + [{"role": "assistant", "content": "", "tool_calls": [call]}]
            text = tokenizer.apply_chat_template(convo, tools=tools, tokenize=False)
            assert text.startswith(head_text), "the chat template is not prefix-preserving"
            reply = text[len(head_text):].rstrip("\n")
            examples.append((head + tokenizer(reply, add_special_tokens=False)["input_ids"],
                             len(head)))
    optim = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        batch = rng.sample(examples, min(4, len(examples)))
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((len(batch), width), tokenizer.pad_token_id)
        labels = torch.full((len(batch), width), -100)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, (ids, start) in enumerate(batch):  # right-padded; loss on the reply only
            input_ids[i, : len(ids)] = torch.tensor(ids)
            labels[i, start: len(ids)] = torch.tensor(ids[start:])
            mask[i, : len(ids)] = 1
        loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optim.step()
        optim.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses


def tiny_model(rows: Iterable[dict[str, Any]], *, nudge_steps: int = 150, seed: int = 0,
               with_reset: bool = True) -> tuple[Qwen2ForCausalLM, PreTrainedTokenizerFast]:
    """Tokenizer and model for ``rows`` (each with ``prompt``, ``task_name``, ``seed``);
    ``with_reset=False`` when the prompts already hold the case brief (the OpenEnv path)."""
    rows = list(rows)
    tokenizer = build_tokenizer(rows, with_reset=with_reset)
    model = build_model(tokenizer, seed)
    if nudge_steps:
        nudge(model, tokenizer, rows, steps=nudge_steps, seed=seed, with_reset=with_reset)
    return model, tokenizer
