"""Frozen seed splits, the same for every task.

Seeds are plain integers so any seed can still be compiled on demand; the split only says
which ones a benchmark reports on. 1001 (the seed README's example) is a train seed.
"""

from __future__ import annotations

SPLITS: dict[str, range] = {
    "train": range(1000, 2200),  # 1,200 seeds
    "dev": range(50_000, 50_150),  # 150 seeds
    "test": range(90_000, 90_250),  # 250 seeds
}


# medical_coding episodes hold three notes; its train split is larger so that it alone holds
# more than 10,000 distinct note texts.
TASK_SPLITS: dict[str, dict[str, range]] = {
    "medical_coding": {**SPLITS, "train": range(1000, 4400)},  # 3,400 train seeds
}


def splits_for(task: str | None = None) -> dict[str, range]:
    return TASK_SPLITS.get(task or "", SPLITS)


def split_of(seed: int, task: str | None = None) -> str | None:
    return next((name for name, r in splits_for(task).items() if seed in r), None)


def seeds(split: str, task: str | None = None) -> range:
    table = splits_for(task)
    if split not in table:
        raise KeyError(f"unknown split {split!r}; use one of {', '.join(table)}")
    return table[split]
