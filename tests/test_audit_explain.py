"""`clarus audit --explain`: permutation importance of a learned shortcut's features.

The synthetic sets plant one column that decides the finding (on train, and on half of the
evaluated rows) among noise columns: a correct importance ranks it first with a drop near
the half-set's share, the noise near 0, and reports the accuracy of the evaluated rows (not
train's, where the planted column decides every row).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

from clarus_env.audit import _log_proba, boosted_trees, fit_fields  # noqa: E402
from clarus_env.audit_explain import (  # noqa: E402
    EXPLAINABLE,
    ExplainError,
    check_agents,
    decode_field,
    family,
    permutation_importance,
)
from clarus_env.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["n:planted", "n:noise[0].amount", "n:noise[1].amount", "s:lines[]=copay@before",
           "s:lines[]=copay@after"]


def synthetic(n: int, rng: np.random.Generator, decided: float = 1.0
              ) -> tuple[np.ndarray, list[tuple[tuple[str, str], ...]]]:
    """``n`` rows: the finding is "a" where the planted column is 1 and "b" where it is 0 on
    the first ``decided`` share of rows, a coin flip on the rest; the party follows the
    finding (so the decoding sets it), the filing is a coin flip the trees cannot learn."""
    planted = rng.integers(0, 2, n).astype(float)
    x = np.column_stack([planted, rng.normal(100, 20, n), rng.normal(50, 5, n),
                         rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n)])
    cut = int(decided * n)
    finding = ["a" if planted[i] else "b" for i in range(cut)]
    finding += [str(v) for v in rng.choice(["a", "b"], n - cut)]
    labels = [(("finding", f), ("responsible_party", "insurer" if f == "a" else "provider"),
               ("resolution_type", str(rng.choice(["appeal", "no_action"]))))
              for f in finding]
    return x, labels


@pytest.fixture(scope="module")
def planted() -> dict:
    rng = np.random.default_rng(7)
    x_train, y_train = synthetic(600, rng)
    x_eval, y_eval = synthetic(400, rng, decided=0.5)
    fitted = fit_fields(y_train, x_train, lambda x, y: boosted_trees(x, y, [False] * 5))
    return {"fitted": fitted, "x": x_eval, "expected": [dict(lab)["finding"] for lab in y_eval],
            "labels": y_eval, "x_train": x_train}


def test_planted_feature_ranks_first_and_noise_is_near_zero(planted: dict) -> None:
    fitted, x, expected = planted["fitted"], planted["x"], planted["expected"]
    report = permutation_importance(fitted, x, expected, "finding", COLUMNS, repeats=5, top=5)
    top = report["features"][0]
    assert top["feature"] == "n:planted"
    # the planted column decides half the evaluated rows: shuffling it costs about half of
    # those (to a coin flip), 0.25 of all; computed on train it would cost about 0.5
    assert 0.15 < top["drop"] < 0.35
    assert top["sd"] < 0.05
    for row in report["features"][1:]:
        assert abs(row["drop"]) < 0.03, row
    # the accuracy is the evaluated rows' (train's would be 1.0), as the trees predict them
    predicted = fitted.models["finding"].predict(x)
    assert report["baseline_accuracy"] == round(float(np.mean(predicted == np.array(expected))), 4)
    assert 0.65 < report["baseline_accuracy"] < 0.85
    # the planted column's mean per expected finding, on the evaluated rows
    for value in ("a", "b"):
        rows = np.array(expected) == value
        assert top["mean_by_outcome"][value] == round(float(x[rows, 0].mean()), 4)
        assert top["present_by_outcome"][value] == 1.0
    assert report["outcome_counts"] == {"a": expected.count("a"), "b": expected.count("b")}
    fams = {f["family"]: f for f in report["families"]}
    assert report["families"][0]["family"] == "n:planted"
    assert fams["s:lines"]["columns"] == 2 and abs(fams["s:lines"]["drop"]) < 0.03
    assert fams["n:noise"]["columns"] == 2


def test_party_decoded_from_the_finding_reads_the_planted_feature(planted: dict) -> None:
    """The party has no model of its own (the finding decides it on train): its importance
    is the finding model's, through the decoding."""
    fitted = planted["fitted"]
    assert "responsible_party" not in fitted.models
    party = [dict(lab)["responsible_party"] for lab in planted["labels"]]
    report = permutation_importance(fitted, planted["x"], party, "responsible_party", COLUMNS)
    assert report["features"][0]["feature"] == "n:planted"
    assert report["features"][0]["drop"] > 0.15


def test_batch_decoding_matches_the_agents_decide(planted: dict) -> None:
    """``decode_field`` on a matrix gives what ``FieldModels.decode`` (the audited agent's
    decide) gives row by row, for every field."""
    fitted, x = planted["fitted"], planted["x"][:80]
    rows = [fitted.decode({f: _log_proba(m, x[i:i + 1]) for f, m in fitted.models.items()})
            for i in range(len(x))]
    for f in fitted.fields:
        assert decode_field(fitted, x, f) == [r[f] for r in rows]


def test_same_bytes_every_run(planted: dict) -> None:
    args = (planted["fitted"], planted["x"], planted["expected"], "finding", COLUMNS)
    one = json.dumps(permutation_importance(*args, repeats=3, seed=1), sort_keys=True)
    two = json.dumps(permutation_importance(*args, repeats=3, seed=1), sort_keys=True)
    assert one == two
    assert one != json.dumps(permutation_importance(*args, repeats=3, seed=2), sort_keys=True)


def test_unknown_field_is_an_error(planted: dict) -> None:
    with pytest.raises(ExplainError, match="no outcome field 'appeal_reason'"):
        permutation_importance(planted["fitted"], planted["x"], planted["expected"],
                               "appeal_reason", COLUMNS)


def test_family_is_the_name_up_to_an_index_value_or_date_part() -> None:
    assert family("s:processor_log.transactions[].description=Copay@=") == \
        "s:processor_log.transactions"
    assert family("c:eob.status=paid") == "c:eob.status"
    assert family("d:eob.date@weekday") == "d:eob.date"
    assert family("n:eob.total") == "n:eob.total"


def test_check_agents_names_what_can_be_explained() -> None:
    assert check_agents("deductive_liability", ["gb_counts_numbers", " gb_counts"]) == \
        ["gb_counts_numbers", "gb_counts"]
    for name, says in (("modal", "no features"), ("heuristic", "no features"),
                       ("always_no_error", "no features"), ("router_gb", "cannot be explained"),
                       ("pass_maximiser", "cannot be explained"), ("gb_nothing", "unknown")):
        with pytest.raises(ExplainError, match=says) as err:
            check_agents("deductive_liability", [name])
        if says != "cannot be explained":
            assert "gb_counts_numbers" in str(err.value)  # the list of explainable agents
    assert "router_gb" not in EXPLAINABLE and "rf_words" in EXPLAINABLE


@pytest.mark.parametrize(("argv", "says"), [
    (["--task", "deductive_liability", "--explain", "modal"], "no features"),
    (["--task", "deductive_liability", "--explain", "heuristic"], "no features"),
    (["--task", "deductive_liability", "--explain", "gb_nope"], "unknown agent 'gb_nope'"),
    (["--task", "all", "--explain", "gb_counts"], "one billing task"),
    (["--task", "medical_coding", "--explain", "gb_counts"], "one billing task"),
    (["--task", "deductive_liability", "--explain", "gb_counts", "--explain-field", "amount"],
     "no outcome field 'amount'"),
    (["--task", "deductive_liability", "--explain", "gb_counts", "--top", "0"], "at least 1"),
    (["--task", "deductive_liability", "--explain", ""], "at least one agent"),
    (["--task", "deductive_liability", "--explain", "gb_counts", "--agents", "modal"],
     "drop --agents"),
    (["--task", "deductive_liability", "--explain", "gb_counts", "--replicates", "2"],
     "drop --replicates"),
])
def test_cli_errors_are_one_line(argv: list[str], says: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--split", "dev", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.slow
def test_cli_on_a_real_task_is_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    """A real task, small: the JSON names the run's columns, and two processes with
    different hash seeds write the same bytes."""
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"explain{hash_seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "OMP_NUM_THREADS": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "clarus_env.cli", "audit", "--task", "deductive_liability",
             "--split", "dev", "--explain", "gb_counts_numbers", "--explain-field",
             "finding,resolution_type", "--limit", "30", "--train-limit", "120", "--top", "5",
             "--repeats", "2", "--out", str(out)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True)
        assert "gb_counts_numbers on dev (30 scenarios)" in done.stdout
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    report = json.loads(outs[0])
    assert report["train_scenarios"] == 120
    assert [(r["agent"], r["field"]) for r in report["runs"]] == [
        ("gb_counts_numbers", "finding"), ("gb_counts_numbers", "resolution_type")]
    run = report["runs"][0]
    assert len(run["features"]) == 5 and 0 < run["used_columns"] <= run["columns"]
    assert all(f["feature"].startswith(("n:", "s:")) for f in run["features"])


@pytest.mark.slow
def test_unshuffled_accuracy_is_the_audits() -> None:
    """The refit and the matrix decoding answer as the audited agent does: with nothing
    shuffled, each field's accuracy is the audit's figure for that agent, on a real task."""
    from clarus_env.audit import audit_task
    from clarus_env.audit_explain import explain

    fields = ["finding", "responsible_party", "resolution_type"]
    report = explain("deductive_liability", ["dev"], ["gb_counts"], fields=fields, limit=40,
                     train_limit=150, top=3, repeats=1)
    audit = audit_task("deductive_liability", "dev", limit=40, train_limit=150,
                       agents=["gb_counts"])
    row = next(r for r in audit["agents"] if r["agent"] == "gb_counts")
    assert {r["field"]: r["baseline_accuracy"] for r in report["runs"]} == \
        {f: row["field_accuracy"][f] for f in fields}
