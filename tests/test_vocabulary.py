"""Every billing task's answer vocabulary reaches the agents that cannot import the package:
each finding and filing reason carries what it means, and the LLM prompt, the MCP tool list and
/metadata (tests/test_server_http.py) print the names with their meanings. A client that saw the
bare names only could learn them from its own invalid actions and had to guess the rest (is a
partly met deductible "deductible_already_met"?)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clarus_env.llm_agent import system_prompt
from clarus_env.server.mcp import tool_list
from clarus_env.tasks import get_task
from clarus_env.tasks.base import vocabulary_text

BILLING = ("deductive_liability", "abductive_conflict", "adversarial_fabrication")
README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("task", BILLING)
def test_every_word_of_the_vocabulary_has_a_meaning(task: str) -> None:
    t = get_task(task)
    assert set(t.finding_meanings) == set(t.findings)
    assert set(t.appeal_reason_meanings) == set(t.appeal_reasons)
    vocab = t.vocabulary()
    assert list(vocab["finding"]) == list(t.findings)  # in the task's own order
    assert all(len(m) > 10 for m in vocab["finding"].values())
    assert all(len(m) > 10 for m in vocab["appeal_reason"].values())


def test_a_task_without_a_meaning_for_a_finding_fails_loudly() -> None:
    t = get_task("deductive_liability")
    broken = type(t)(**{**t.__dict__, "finding_meanings": {}})
    with pytest.raises(KeyError):
        broken.vocabulary()


@pytest.mark.parametrize("task", BILLING)
def test_the_llm_prompt_gives_each_finding_its_meaning(task: str) -> None:
    prompt = system_prompt(task)
    vocab = get_task(task).vocabulary()
    assert vocabulary_text(vocab["finding"]) in prompt
    for name, meaning in vocab["finding"].items():
        assert f"{name}: {meaning}" in prompt
    if vocab["appeal_reason"]:
        assert vocabulary_text(vocab["appeal_reason"]) in prompt


def test_the_mcp_tools_list_every_tasks_vocabulary() -> None:
    tools = {t["name"]: t for t in tool_list()}
    diagnose = tools["write_diagnosis"]["description"]
    draft = tools["draft_resolution"]["description"]
    for task in BILLING:
        vocab = get_task(task).vocabulary()
        assert f"{task}: {vocabulary_text(vocab['finding'])}" in diagnose
        if vocab["appeal_reason"]:
            assert f"{task}: {vocabulary_text(vocab['appeal_reason'])}" in draft
    assert "by task" not in tools["submit_codes"]["description"]  # coding tools unchanged


def test_the_readme_lists_every_finding() -> None:
    text = README.read_text(encoding="utf-8")
    for task in BILLING:
        for name in get_task(task).findings:
            assert f"`{name}`" in text, (task, name)
