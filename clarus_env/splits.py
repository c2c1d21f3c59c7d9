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


def split_of(seed: int) -> str | None:
    return next((name for name, r in SPLITS.items() if seed in r), None)


def seeds(split: str) -> range:
    if split not in SPLITS:
        raise KeyError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    return SPLITS[split]
