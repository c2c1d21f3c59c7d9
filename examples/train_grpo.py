"""GRPO on a Clarus task with TRL: the script to copy.

    pip install -e '.[train]'      # CPU torch; on a GPU machine install your CUDA torch first
    python examples/train_grpo.py --model Qwen/Qwen2.5-1.5B-Instruct --max-steps 200
    python examples/train_grpo.py --tiny          # one CPU step with a tiny local model

Each dataset row is a train-split seed; TRL resets one Clarus environment per rollout with the
row (``make_trl_env``), offers the model one tool per action, plays its tool calls and trains
on the environment's own reward (``get_reward``: the step rewards plus the graded score).
Two more reward functions with weight 0 only log, per step, the share of rollouts whose
answer was right (outcome accuracy: every outcome check passed) and the share that passed
every check (pass rate); a callback prints them with the reward after each step::

    step 1  reward 0.0412  outcome_accuracy 0.000  pass_rate 0.000  tool_calls/rollout 1.12

``--tiny`` swaps the model for a 2-layer one built on the spot (``examples/tiny_model.py``):
it proves the wiring on a CPU in a minute and learns nothing. ``--env-url`` plays the
episodes on a running ``clarus serve`` instead of in-process.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo importable as a package root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clarus_env.evaluation import outcome_correct  # noqa: E402
from clarus_env.splits import seeds  # noqa: E402
from clarus_env.trl_adapter import make_trl_env  # noqa: E402

DEFAULT_MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
INSTRUCTION = "Resolve the patient's billing dispute with the tools, then close the case. "


def train_dataset(task: str, n: int, instruction: str = INSTRUCTION) -> list[dict[str, Any]]:
    """One row per train seed: the prompt the model sees before ``reset``'s brief, and the
    columns ``reset`` reads (the environment, not the prompt, holds the case)."""
    return [{"prompt": [{"role": "user", "content": instruction}], "task_name": task,
             "seed": seed} for seed in list(seeds("train", task))[:n]]


def outcome_accuracy(environments: list[Any], **_: Any) -> list[float]:
    """1 when the episode ended with the right answer (every outcome check passed)."""
    return [float(env.done and outcome_correct({"grade": env.grade})) for env in environments]


def pass_rate(environments: list[Any], **_: Any) -> list[float]:
    """1 when the episode ended with every check passed (process, evidence, outcome...)."""
    return [float(env.done and env.grade is not None
                  and env.grade.get("passed") == env.grade.get("total"))
            for env in environments]


def step_line(logs: dict[str, Any], step: int, env_name: str) -> str | None:
    """The one line printed per optimizer step, from TRL's logged metrics."""
    if f"rewards/{env_name}/mean" not in logs:
        return None
    return (f"step {step}  reward {logs[f'rewards/{env_name}/mean']:.4f}  "
            f"outcome_accuracy {logs['rewards/outcome_accuracy/mean']:.3f}  "
            f"pass_rate {logs['rewards/pass_rate/mean']:.3f}  "
            f"tool_calls/rollout {logs.get('tools/call_frequency', 0.0):.2f}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=DEFAULT_MODEL, help="a causal LM whose chat template "
                   f"supports tools (default {DEFAULT_MODEL})")
    p.add_argument("--task", default="deductive_liability")
    p.add_argument("--num-seeds", type=int, default=512, help="train seeds in the dataset")
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--num-generations", type=int, default=8, help="rollouts per seed (group)")
    p.add_argument("--batch-size", type=int, default=8, help="rollouts per device per step")
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=1e-6)
    p.add_argument("--max-completion-length", type=int, default=8192,
                   help="tokens of tool calls and tool results per rollout; a tool result "
                   "that would not fit is dropped after the env has acted on the call")
    p.add_argument("--max-tool-calls", type=int, default=30, help="tool rounds per rollout")
    p.add_argument("--output-dir", default="runs/grpo-clarus")
    p.add_argument("--env-url", default=None, help="a running `clarus serve` (default: "
                   "episodes run in-process)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tiny", action="store_true", help="one CPU step with a tiny local model "
                   "(a wiring check; nothing is downloaded)")
    args = p.parse_args(argv)
    if args.tiny:
        args.num_seeds, args.max_steps, args.num_generations = 2, 1, 4
        args.batch_size, args.grad_accum = 8, 1
        args.learning_rate, args.max_completion_length, args.max_tool_calls = 1e-3, 1024, 3
    return args


def main(argv: list[str] | None = None) -> Any:
    args = parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    rows = train_dataset(args.task, args.num_seeds)
    env_class = make_trl_env(args.task)
    if args.env_url:
        env_class = type(env_class.__name__, (env_class,), {"env_url": args.env_url})
    if args.tiny:
        import torch

        from examples.tiny_model import tiny_model

        torch.set_num_threads(1)  # matrices this small gain nothing from threads
        model, tokenizer = tiny_model(rows, seed=args.seed)
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(args.model, dtype="auto")
        tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")

    class PrintStep(TrainerCallback):
        def on_log(self, _args: Any, state: Any, _control: Any, logs: Any = None,
                   **_: Any) -> None:
            line = step_line(logs or {}, state.global_step, env_class.__name__)
            if line:
                print(line, flush=True)

    config = GRPOConfig(
        output_dir=args.output_dir, max_steps=args.max_steps, seed=args.seed,
        num_generations=args.num_generations, per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum, learning_rate=args.learning_rate,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls,
        reward_weights=[0.0, 0.0],  # log only; TRL adds the env's get_reward at weight 1
        logging_steps=1, save_strategy="no" if args.tiny else "steps", report_to="none",
        use_cpu=args.tiny, disable_tqdm=True)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config,
                          reward_funcs=[outcome_accuracy, pass_rate],
                          train_dataset=Dataset.from_list(rows), environment_factory=env_class,
                          callbacks=[PrintStep()])
    trainer.train()
    return trainer


if __name__ == "__main__":
    main()
