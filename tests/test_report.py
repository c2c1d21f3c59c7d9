"""clarus report: the numbers agree with clarus eval's own summary, the file is self-contained
and byte-identical for the same inputs, and bad inputs are refused with a reason."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clarus_env.cli import main
from clarus_env.evaluation import dump, evaluate
from clarus_env.report import ReportError, compute, load_results, render_html

pytest.importorskip("matplotlib", reason="clarus report needs the .[report] extra")

TASKS = ["deductive_liability", "abductive_conflict", "medical_coding"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("report")
    paths = []
    for agent in ("oracle", "random"):
        res = evaluate(agent, TASKS, "dev", trials=2, limit=2, progress=False)
        path = d / f"{agent}.json"
        dump(res, str(path))
        paths.append(str(path))
    return paths


def test_numbers_match_the_eval_summary(results: list[str]) -> None:
    runs = load_results(results)
    data = compute(runs)
    for run in runs:
        summary = run["doc"]["summary"]
        for task in TASKS:
            s = data["stats"][task][run["label"]]
            assert s["outcome_accuracy"] == pytest.approx(summary[task]["outcome_accuracy"],
                                                          abs=1e-4)
            assert s["mean_score"] == pytest.approx(summary[task]["mean_score"], abs=1e-4)
            for k, v in summary[task]["pass_hat_k"].items():
                assert s["pass_hat_k"][int(k) - 1] == pytest.approx(v, abs=1e-4)
            for k, v in summary[task]["outcome_pass_hat_k"].items():
                assert s["outcome_pass_hat_k"][int(k) - 1] == pytest.approx(v, abs=1e-4)
        coding = summary["medical_coding"]["coding"]
        mine = data["coding"][run["label"]]
        assert mine["all"]["icd10cm_micro_f1"] == coding["icd10cm_micro_f1"]
        for d, v in coding["mean_reward_by_difficulty"].items():
            assert mine[d]["mean_reward"] == pytest.approx(v, abs=1e-4)
    oracle = data["stats"]["deductive_liability"]["oracle"]
    assert oracle["outcome_accuracy"] == 1.0 and set(oracle["fail_rate"].values()) == {0.0}
    assert max(data["stats"]["deductive_liability"]["random"]["fail_rate"].values()) > 0


def test_report_is_self_contained_and_deterministic(results: list[str], tmp_path: Path
                                                    ) -> None:
    out1, out2 = tmp_path / "a.html", tmp_path / "b.html"
    assert main(["report", *results, "--out", str(out1)]) == 0
    # another process, another hash seed: the same bytes
    subprocess.run([sys.executable, "-m", "clarus_env.cli", "report", *results, "--out",
                    str(out2)], check=True, capture_output=True,
                   env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"})
    text = out1.read_bytes()
    assert text == out2.read_bytes()
    html = text.decode()
    # nothing to fetch: no script, stylesheet, image or font from anywhere
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\((?!#)", html)
    refs = set(re.findall(r"(?:src|href)=\"([^\"]*)\"", html))
    assert all(r.startswith(("#", "data:image/png;base64,")) for r in refs), refs  # colorbars
    # one chart per section, ids unique across the inlined SVGs
    charts = re.findall(r'<figure class="chart" id="chart-([^"]+)">', html)
    assert charts == ["outcome", "passk", "scores", *(f"heat-{t}" for t in TASKS), "coding"]
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    for t in TASKS:
        assert f"<table class='most-failed' data-task='{t}'>" in html


def test_coding_checks_compare_by_difficulty(results: list[str]) -> None:
    data = compute(load_results(results))
    checks = set(data["stats"]["medical_coding"]["random"]["fail_rate"])
    assert checks <= {f"{d} case coded exactly" for d in ("easy", "medium", "hard")}


def test_same_agent_twice_gets_distinct_labels(results: list[str], tmp_path: Path) -> None:
    copy = tmp_path / "again.json"
    copy.write_text(Path(results[0]).read_text())
    labels = [r["label"] for r in load_results([results[0], str(copy), results[0]])]
    assert labels == ["oracle [oracle.json] #1", "oracle [again.json]",
                      "oracle [oracle.json] #2"]


@pytest.mark.parametrize("content, message", [
    ("not json", "not JSON"),
    (json.dumps({"format": "clarus-audit"}), "not a clarus-eval-results file"),
    (json.dumps({"format": "clarus-eval-results", "episodes": []}), "has no episodes"),
])
def test_bad_files_are_refused_with_the_file_and_reason(tmp_path: Path, content: str,
                                                        message: str,
                                                        capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ReportError, match=message):
        load_results([str(bad)])
    assert main(["report", str(bad), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and message in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_infer_results_are_labelled_by_model_and_show_usage(results: list[str],
                                                            tmp_path: Path) -> None:
    doc = json.loads(Path(results[1]).read_text())
    doc.update(agent="llm", model="tiny-model",
               usage={"prompt_tokens": 12345, "completion_tokens": 678, "cost_usd": 0.0123})
    path = tmp_path / "infer.json"
    path.write_text(json.dumps(doc))
    runs = load_results([results[0], str(path)])
    assert [r["label"] for r in runs] == ["oracle", "llm (tiny-model)"]
    html = render_html(runs)
    assert "<td>llm (tiny-model)</td><td class='num'>12,345</td><td class='num'>678</td>" \
           "<td class='num'>0.0123</td>" in html
