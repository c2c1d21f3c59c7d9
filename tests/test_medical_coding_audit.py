"""The coding shortcut audit (issue 9 acceptance, on the first test seeds): the phrase memorizer
fitted on train stays at or below 0.60 mean reward, the note-reading heuristic beats every
shortcut, the oracle is perfect and random is near zero."""

from __future__ import annotations

import pytest

from clarus_env.audit import audit_task, format_audit

LIMIT = 30


@pytest.fixture(scope="module")
def report():
    return audit_task("medical_coding", "test", limit=LIMIT)


def test_acceptance_figures(report) -> None:
    by = {r["agent"]: r for r in report["agents"]}
    assert by["oracle"]["mean_reward"] == 1.0
    assert by["random"]["mean_reward"] < 0.05
    assert by["phrase_memorizer"]["mean_reward"] <= 0.60
    shortcuts = [r for r in report["agents"] if r["kind"] == "shortcut"]
    assert {r["agent"] for r in shortcuts} == {"constant", "phrase_memorizer", "top_search_hit"}
    assert all(by["heuristic"]["mean_reward"] > r["mean_reward"] for r in shortcuts)
    assert report["best_shortcut"] == max(r["mean_reward"] for r in shortcuts)


def test_report_formats_and_names_unknown_agents(report) -> None:
    text = format_audit(report)
    assert "phrase_memorizer" in text and "tier 2" in text
    with pytest.raises(ValueError, match="unknown audit agent"):
        audit_task("medical_coding", "test", limit=1, agents=["nope"])
