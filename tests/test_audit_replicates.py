"""`clarus audit --replicates`: the replicate summary is the audit's own numbers under each
salt, the caller's salt survives it, replicates are other scenarios, and the verdict tells a
consistent leak from crossings that vary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clarus_env.audit_replicates import (
    replicate_salts,
    replicates,
    run_replicates,
    salted,
    summarize,
    summarize_split,
)
from clarus_env.cli import main
from clarus_env.scenario import SALT_ENV, content_hash
from clarus_env.scenario_store import load_scenario
from clarus_env.splits import seeds

TASK = "abductive_conflict"
TINY = ["audit", "--task", TASK, "--split", "dev,test", "--limit", "4", "--train-limit", "20",
        "--agents", "modal,random,heuristic,cite_everything", "--quiet"]


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, str]:
    """One tiny replicate run through the CLI (2 replicates), and the same audit without
    them, both in this process with no salt set."""
    import contextlib
    import io

    saved = os.environ.pop(SALT_ENV, None)
    try:
        out = tmp_path_factory.mktemp("rep") / "rep.json"
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            assert main([*TINY, "--replicates", "2", "--salt-prefix", "t", "--out",
                         str(out)]) == 0
        assert SALT_ENV not in os.environ  # restored to unset
        with contextlib.redirect_stdout(io.StringIO()) as plain:
            assert main(TINY) == 0
    finally:
        if saved is not None:
            os.environ[SALT_ENV] = saved
    return json.loads(out.read_text()), buf.getvalue(), plain.getvalue()


def test_committed_audit_printed_first_unchanged(replicated: tuple[dict[str, Any], str, str]
                                                 ) -> None:
    data, printed, plain = replicated
    assert printed.startswith(plain)
    rest = printed[len(plain):]
    assert "replicates task=abductive_conflict split=test: 2 salted replicate(s) (t-0, t-1)" \
        in rest
    assert data["format"] == "clarus-audit" and len(data["reports"]) == 2
    rep = data["replicates"]
    assert rep["format"] == "clarus-audit-replicates" and rep["version"] == 1
    assert rep["salts"] == ["t-0", "t-1"] and rep["base_salt"] == ""


def test_summary_equals_separate_audits_by_hand(
        replicated: tuple[dict[str, Any], str, str], tmp_path: Path) -> None:
    """Each replicate's reports are those of `clarus audit` run by hand in a fresh process
    with that salt (another PYTHONHASHSEED: no cache of this process, no hash order), and the
    summary's numbers are those reports' numbers."""
    rep = replicated[0]["replicates"]
    by_hand = []
    for i, salt in enumerate(rep["salts"]):
        out = tmp_path / f"{salt}.json"
        env = {**os.environ, SALT_ENV: salt, "PYTHONHASHSEED": str(17 + i),
               "OMP_NUM_THREADS": "1"}
        subprocess.run([sys.executable, "-m", "clarus_env.cli", *TINY, "--out", str(out)],
                       env=env, check=True, capture_output=True)
        reports = json.loads(out.read_text())["reports"]
        assert reports == rep["runs"][i]["reports"]
        by_hand.append({"salt": salt, "reports": reports})
    assert summarize(by_hand) == rep["summary"]
    for split in ("dev", "test"):
        s = rep["summary"][TASK][split]
        for row in s["agents"]:
            got = [next(a["pass_rate"] for r in run["reports"] if r["split"] == split
                        for a in r["agents"] if a["agent"] == row["agent"])
                   for run in by_hand]
            assert row["pass_rates"] == got
            assert row["pass_min"] == min(got) and row["pass_max"] == max(got)
            assert row["pass_mean"] == round(sum(got) / len(got), 4)
    test_sel = [p["selected_on_dev"] for p in rep["summary"][TASK]["test"]["per_replicate"]]
    assert test_sel == [next(r for r in run["reports"] if r["split"] == "test")
                        ["selected_on_dev"]["pass"] for run in by_hand]


def test_replicates_compile_other_scenarios() -> None:
    """Each salt compiles other scenarios than the committed split and than the other salt,
    the same ones again when it comes back (no cache keeps a previous salt's), and the
    committed split is read again once the salt is gone."""
    saved = os.environ.pop(SALT_ENV, None)
    try:
        seed = seeds("test", TASK)[0]
        train_seed = seeds("train", TASK)[0]
        committed = content_hash(load_scenario(TASK, seed))
        hashes = {}
        for salt in ("u-0", "u-1", "u-0"):
            with salted(salt):
                assert os.environ[SALT_ENV] == salt
                got = (content_hash(load_scenario(TASK, seed)),
                       content_hash(load_scenario(TASK, train_seed)))
            hashes.setdefault(salt, got)
            assert hashes[salt] == got
        assert hashes["u-0"][0] != hashes["u-1"][0] != committed != hashes["u-0"][0]
        assert hashes["u-0"][1] != hashes["u-1"][1]
        assert content_hash(load_scenario(TASK, seed)) == committed
    finally:
        if saved is not None:
            os.environ[SALT_ENV] = saved


@pytest.mark.parametrize("caller", [None, "mine"])
def test_caller_salt_restored_even_on_error(monkeypatch: pytest.MonkeyPatch,
                                            caller: str | None) -> None:
    if caller is None:
        monkeypatch.delenv(SALT_ENV, raising=False)
    else:
        monkeypatch.setenv(SALT_ENV, caller)
    seen = []

    def failing(task: str, splits: list[str], **_: Any) -> list[dict[str, Any]]:
        seen.append(os.environ[SALT_ENV])
        raise RuntimeError("planted")

    with pytest.raises(RuntimeError, match="planted"):
        replicates([TASK], ["test"], 3, "p", audit=failing)
    assert seen == (["p-0"] if caller is None else ["mine-p-0"])
    assert os.environ.get(SALT_ENV) == caller

    def ok(task: str, splits: list[str], **_: Any) -> list[dict[str, Any]]:
        seen.append(os.environ[SALT_ENV])
        return []

    seen.clear()
    runs = run_replicates(TASK, ["test"], replicate_salts(2, "p", caller or ""), audit=ok)
    assert [r["salt"] for r in runs] == seen
    assert os.environ.get(SALT_ENV) == caller


def test_salts_and_bad_counts() -> None:
    assert replicate_salts(3, "r9rep") == ["r9rep-0", "r9rep-1", "r9rep-2"]
    assert replicate_salts(1, "r", "S") == ["S-r-0"]
    with pytest.raises(ValueError):
        replicate_salts(0)
    with pytest.raises(ValueError):
        replicate_salts(2, "")
    with pytest.raises(SystemExit):
        main(["audit", "--task", TASK, "--replicates", "-1"])


# -- the aggregation, on planted reports ----------------------------------------------------
def _row(agent: str, kind: str, pass_rate: float, finding: float = 0.5) -> dict[str, Any]:
    return {"agent": agent, "kind": kind, "pass_rate": pass_rate,
            "field_accuracy": {"finding": finding}}


def _report(rows: list[dict[str, Any]], modal: float = 0.40) -> dict[str, Any]:
    return {"task": TASK, "split": "test", "scenarios": 100, "fields": ["finding"],
            "modal_share": {"finding": {"value": "x", "share": 0.5}},
            "modal_outcome": {"value": {"finding": "x"}, "share": modal}, "agents": rows}


def test_planted_consistent_leak_and_varying_crossings() -> None:
    reps = [
        _report([_row("oracle", "reference", 1.0), _row("leak", "shortcut", 0.70),
                 _row("lucky", "shortcut", 0.46), _row("fieldy", "shortcut", 0.2, 0.61),
                 _row("modal", "shortcut", 0.40)]),
        _report([_row("oracle", "reference", 1.0), _row("leak", "shortcut", 0.66),
                 _row("lucky", "shortcut", 0.44), _row("fieldy", "shortcut", 0.2, 0.60),
                 _row("modal", "shortcut", 0.45)]),
    ]
    s = summarize_split(["a", "b"], reps)
    by = {a["agent"]: a for a in s["agents"]}
    assert [a["agent"] for a in s["agents"]] == ["oracle", "leak", "lucky", "fieldy", "modal"]
    assert by["oracle"]["over_bar"] == 0  # references are held to no bar
    assert by["leak"]["over_bar"] == 2 and by["leak"]["over_bar_in"] == [True, True]
    assert by["leak"]["pass_mean"] == 0.68 and by["leak"]["pass_min"] == 0.66
    assert by["lucky"]["over_bar_in"] == [True, False]  # 0.46 > 0.45; 0.44 is not
    assert by["fieldy"]["over_bar_in"] == [True, False]  # 0.61 > 0.60; at the bar holds
    assert by["modal"]["over_bar"] == 0  # exactly at the pass bar holds it
    assert s["consistent"] == ["leak"] and s["varying"] == {"lucky": 1, "fieldy": 1}
    assert s["verdict"].startswith("consistent leak: leak over the bar in all 2 replicates")
    assert [p["best"] for p in s["per_replicate"]] == [
        {"agent": "leak", "pass_rate": 0.70}, {"agent": "leak", "pass_rate": 0.66}]
    assert [p["pass_bar"] for p in s["per_replicate"]] == [0.45, 0.45]

    no_leak = [_report([r for r in rep["agents"] if r["agent"] != "leak"]) for rep in reps]
    s2 = summarize_split(["a", "b"], no_leak)
    assert s2["consistent"] == []
    assert s2["verdict"].startswith("crossings vary by replicate: lucky 1/2, fieldy 1/2")
    quiet = [_report([_row("modal", "shortcut", 0.40)]) for _ in range(3)]
    assert summarize_split(["a", "b", "c"], quiet)["verdict"].startswith("no crossing")
    with pytest.raises(ValueError):
        summarize_split(["a"], reps)
