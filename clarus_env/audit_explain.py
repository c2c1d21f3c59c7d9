"""`clarus audit --explain`: which features carry a learned shortcut.

When the audit reports that a learned shortcut (boosted trees over the leaves of what the
agent was shown) reads an outcome field above its bar, the generator's author needs to know
which leaves it reads, and how they differ by outcome, to remove the cue. This module refits
the named learned agents exactly as the audit does (``audit.learned_parts``: the same columns,
fixed on train, and the same learner; ``audit.fit_fields``: the same per-field models), decodes
their answers on the audited split exactly as their ``decide`` does, and measures **permutation
importance** there: the drop in the chosen field's accuracy when one column (or one family of
columns) is shuffled across the split's scenarios. Importance is measured on the audited split,
not on train: a column the trees memorised on train but which does not carry over is no leak.

A column no tree of the models that decide the field splits on cannot change an answer when
shuffled: its drop is exactly 0 and it is not re-scored (this is what keeps a run to seconds
with hundreds of columns). Each shuffle is drawn from a seeded generator per repeat, the same
for every column, so the report is the same bytes in every process.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .audit import (
    BILLING_TASKS,
    LEARNED_AGENTS,
    LEARNER,
    RELATION_RULES,
    FieldModels,
    _one_thread,
    exploit_agents,
    fit_fields,
    label_of,
    learned_parts,
    load_train,
    play_views,
    reference_agents,
    view_leaves,
)
from .scenario_store import load_scenario
from .splits import seeds

# the learners whose per-field models this module can refit and decode (the router's trees
# per family of views and the pass maximiser's whole-answer model are decoded differently)
EXPLAINABLE: dict[str, tuple[tuple[str, ...], str]] = {
    name: (kinds, LEARNER.get(name, "boosted")) for name, kinds in LEARNED_AGENTS.items()
    if LEARNER.get(name, "boosted") in ("boosted", "boosted_full", "forest")}
NOT_EXPLAINABLE = {
    "router_gb": "fits one set of trees per family of views; explain gb_records (the same "
                 "leaves, one set of trees) instead",
    "pass_maximiser": "decodes whole answers weighed by its amount pointer; explain a "
                      "per-field agent over the same leaves instead",
}
# the shortcuts without a feature matrix (their names; always_* and partial_* by prefix)
FEATURELESS = ("modal", "nb_complaint", "claim_memorizer", "lookup_memorizer", "nb_records",
               "rf_records", "counter_text")
FEATURELESS_PREFIXES = ("always_", "partial_")
# a column's family: its name up to the first index, category value or date part
FAMILY_END = re.compile(r"[\[=@]")
DECIMALS = 4  # figures in the report: byte-stable, and finer than a one-scenario change


class ExplainError(ValueError):
    """Bad input to ``--explain``: the CLI prints it as a one-line error, not a traceback."""


def family(column: str) -> str:
    """A column's family: its name up to the first ``[``, ``=`` or ``@`` (every line of one
    list, every value of one category, every part of one date), so a cue spread over many
    columns (one count per EOB line) ranks as one."""
    m = FAMILY_END.search(column)
    return column[:m.start()] if m else column


def check_agents(task: str, names: Iterable[str]) -> list[str]:
    """The agent names, or an ``ExplainError`` that says why one cannot be explained."""
    out = [n.strip() for n in names if n.strip()]
    if not out:
        raise ExplainError("--explain needs at least one agent name; explainable agents: "
                           + ", ".join(EXPLAINABLE))
    for name in out:
        if name in EXPLAINABLE:
            continue
        if name in NOT_EXPLAINABLE:
            raise ExplainError(f"{name} cannot be explained: it {NOT_EXPLAINABLE[name]}")
        featureless = (name in FEATURELESS or name.startswith(FEATURELESS_PREFIXES)
                       or name in RELATION_RULES or name in reference_agents(task)
                       or name in exploit_agents(task))
        if featureless:
            raise ExplainError(f"{name} is not a learned agent over a feature matrix: it has "
                               "no features to rank; explainable agents: "
                               + ", ".join(EXPLAINABLE))
        raise ExplainError(f"unknown agent {name!r}; explainable agents: "
                           + ", ".join(EXPLAINABLE))
    return out


def _used(model: Any, n_columns: int) -> set[int]:
    """The columns some tree of ``model`` splits on (every column if the model is of a kind
    this cannot read): a column no tree reads cannot change a prediction."""
    predictors = getattr(model, "_predictors", None)  # scikit-learn's boosted trees
    if predictors is not None:
        return {int(f) for iteration in predictors for tree in iteration
                for f, leaf in zip(tree.nodes["feature_idx"], tree.nodes["is_leaf"],
                                   strict=True) if not leaf}
    estimators = getattr(model, "estimators_", None)  # a random forest
    if estimators is not None:
        return {int(f) for est in estimators for f in est.tree_.feature if f >= 0}
    return set(range(n_columns))


def _log_probas(model: Any, x: Any) -> tuple[list[str], Any]:
    """Every row's log-probability per class, clipped as ``audit._log_proba`` clips it."""
    import numpy as np

    with _one_thread().limit(limits=1, user_api="openmp"):
        proba = model.predict_proba(x)
    return [str(c) for c in model.classes_], np.log(np.maximum(proba, 1e-12))


def decode_field(fitted: FieldModels, x: Any, field: str) -> list[str]:
    """``field`` of the answer ``FieldModels.decode`` gives for every row of ``x``, computed a
    matrix at a time: the finding is its model's argmax (the first in sorted order on a tie),
    the other fields come from the whole train answer with that finding that the other
    models score highest (the first in sorted order on a tie)."""
    import numpy as np

    fields, n = fitted.fields, x.shape[0]
    first = fields[0]
    if first in fitted.models:
        classes, logp = _log_probas(fitted.models[first], x)
        picks = [classes[i] for i in np.argmax(logp, axis=1)]
    else:
        picks = [fitted.constant[first]] * n
    if field == first:
        return picks
    score = np.zeros((n, len(fitted.answers)))
    for f in fields[1:]:
        if f not in fitted.models:
            continue
        classes, logp = _log_probas(fitted.models[f], x)
        at = {c: i for i, c in enumerate(classes)}
        i = fields.index(f)
        column = np.stack([logp[:, at[a[i]]] if a[i] in at else np.full(n, -math.inf)
                           for a in fitted.answers], axis=1)
        score = score + column
    finding = np.array([a[0] for a in fitted.answers], dtype=object)
    allowed = finding[None, :] == np.array(picks, dtype=object)[:, None]
    tops = np.where(allowed, score, -np.inf).max(axis=1)
    # the first allowed answer scoring the top (all of them -inf: the first allowed one)
    best = np.argmax(allowed & (score == tops[:, None]), axis=1)
    i = fields.index(field)
    return [fitted.answers[b][i] for b in best]


def _round(v: float) -> float:
    return round(float(v), DECIMALS) + 0.0  # + 0.0: -0.0 prints as 0.0


def permutation_importance(fitted: FieldModels, x: Any, expected: list[str], field: str,
                           columns: list[str], *, repeats: int = 5, seed: int = 0,
                           top: int = 15) -> dict[str, Any]:
    """The drop in ``field``'s accuracy on the rows of ``x`` (whose answers are ``expected``)
    when each column, and each family of columns, is shuffled across the rows: mean and
    sample s.d. over ``repeats`` seeded shuffles, the ``top`` of each by mean drop, each column
    with its mean and its presence per expected value (what the generator must even out)."""
    import numpy as np

    if field not in fitted.fields:
        raise ExplainError(f"no outcome field {field!r}; this task's fields: "
                           + ", ".join(fitted.fields))
    x = np.array(x, dtype=float)
    n = x.shape[0]
    truth = np.array(expected, dtype=object)

    def accuracy(m: Any) -> float:
        return float(np.mean(np.array(decode_field(fitted, m, field), dtype=object) == truth))

    baseline = accuracy(x)
    deciding = ([fitted.models[field]] if field == fitted.fields[0] and field in fitted.models
                else list(fitted.models.values()))
    used: set[int] = set()
    for model in deciding:
        used |= _used(model, len(columns))
    perms = [np.random.default_rng([seed, r]).permutation(n) for r in range(repeats)]

    def drops(idx: list[int]) -> tuple[float, float]:
        if not used & set(idx):
            return 0.0, 0.0
        got = []
        for perm in perms:
            saved = x[:, idx].copy()
            x[:, idx] = saved[perm]
            got.append(baseline - accuracy(x))
            x[:, idx] = saved
        mean = sum(got) / len(got)
        sd = math.sqrt(sum((g - mean) ** 2 for g in got) / (len(got) - 1)) if len(got) > 1 else 0.0
        return mean, sd

    values = sorted(set(expected))
    rows = truth[:, None] == np.array(values, dtype=object)[None, :]

    def by_outcome(c: int) -> tuple[dict[str, float | None], dict[str, float]]:
        col = x[:, c]
        means: dict[str, float | None] = {}
        present: dict[str, float] = {}
        for j, v in enumerate(values):
            vals = col[rows[:, j]]
            seen = vals[~np.isnan(vals)]
            means[v] = _round(seen.mean()) if len(seen) else None
            present[v] = _round(len(seen) / len(vals))
        return means, present

    scored = []
    for c, name in enumerate(columns):
        mean, sd = drops([c])
        scored.append((-_round(mean), name, c, sd))
    scored.sort()
    features = []
    for neg, name, c, sd in scored[:top]:
        means, present = by_outcome(c)
        features.append({"feature": name, "drop": -neg + 0.0, "sd": _round(sd),
                         "mean_by_outcome": means, "present_by_outcome": present})
    members: dict[str, list[int]] = defaultdict(list)
    for c, name in enumerate(columns):
        members[family(name)].append(c)
    single = {name: -neg + 0.0 for neg, name, _, _ in scored}
    fam = []
    for name, idx in members.items():
        mean, sd = drops(idx)
        fam.append((-_round(mean), name, idx, sd))
    fam.sort()
    families = [{"family": name, "columns": len(idx), "drop": -neg + 0.0, "sd": _round(sd),
                 "top_columns": [columns[c] for c in sorted(
                     idx, key=lambda c: (-single[columns[c]], columns[c]))[:3]]}
                for neg, name, idx, sd in fam[:top]]
    counts = {v: int(rows[:, j].sum()) for j, v in enumerate(values)}
    return {"field": field, "rows": n, "baseline_accuracy": _round(baseline),
            "outcome_counts": counts, "columns": len(columns), "used_columns": len(used),
            "repeats": repeats, "seed": seed, "features": features, "families": families}


def explain(task: str, splits: Iterable[str], agents: Iterable[str], *,
            fields: Iterable[str] = ("finding",), top: int = 15, repeats: int = 5,
            seed: int = 0, limit: int | None = None, train_limit: int | None = None,
            timings: dict[str, float] | None = None) -> dict[str, Any]:
    """Refit each named learned agent on train as the audit does (once, whatever the number
    of fields) and rank its columns by permutation importance for each of ``fields`` on each
    split (``permutation_importance``). ``timings`` (if given) receives the seconds spent
    playing the views, fitting and shuffling: kept out of the report, which must be the same
    bytes in every run."""
    clock = timings if timings is not None else {}
    start = time.perf_counter()
    if task not in BILLING_TASKS:
        raise ExplainError(f"--explain covers one billing task ({', '.join(BILLING_TASKS)}); "
                           f"got {task!r}")
    if top < 1 or repeats < 1:
        raise ExplainError("--top and --repeats must be at least 1")
    names = check_agents(task, agents)
    fields = [f.strip() for f in fields if f.strip()]
    if not fields:
        raise ExplainError("--explain-field needs at least one outcome field")
    splits = [s for s in splits if s]
    loaded = {}
    for split in splits:  # every input checked before the minutes of fitting
        scenarios = [load_scenario(task, s) for s in list(seeds(split, task))[:limit]]
        if not scenarios:
            raise ExplainError(f"split {split!r} of {task} has no scenarios")
        labels = [dict(label_of(sc["expected"])) for sc in scenarios]
        for field in fields:
            if any(field not in lab for lab in labels):
                raise ExplainError(f"no outcome field {field!r} in {task}; its fields: "
                                   + ", ".join(labels[0]))
        loaded[split] = (scenarios, labels)
    train = load_train(task, train_limit)
    evaluated = {split: ([view_leaves(v) for v in play_views(task, split, scenarios)], labels)
                 for split, (scenarios, labels) in loaded.items()}
    clock.update(fit=0.0, importance=0.0)
    runs = []
    for name in names:
        kinds, model = EXPLAINABLE[name]
        parts = learned_parts(train, kinds, model)
        if parts is None:
            raise ExplainError(f"{name} has no columns on this train set (no leaf of its "
                               f"kinds {', '.join(kinds)}): the audit skips it too")
        matrix, fit = parts
        t = time.perf_counter()
        clock.setdefault("views", t - start)
        fitted = fit_fields(train.labels, matrix.transform(train.leaves or []), fit)
        clock["fit"] += time.perf_counter() - t
        t = time.perf_counter()
        for split, (leaves, labels) in evaluated.items():
            x = matrix.transform(leaves)
            for field in fields:
                result = permutation_importance(
                    fitted, x, [lab[field] for lab in labels], field, list(matrix.columns),
                    repeats=repeats, seed=seed, top=top)
                runs.append({"agent": name, "split": split, **result})
        clock["importance"] += time.perf_counter() - t
    return {"format": "clarus-audit-explain", "task": task, "fields": fields,
            "train_scenarios": len(train.scenarios), "runs": runs}


def _cell(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def format_explain(report: dict[str, Any]) -> str:
    """The top features and families of every run, as tables."""
    lines = [f"audit --explain {report['task']} fields={','.join(report['fields'])} "
             f"(fitted on {report['train_scenarios']} train scenarios)"]
    for run in report["runs"]:
        values = sorted(run["outcome_counts"])
        modal = max(run["outcome_counts"].values()) / run["rows"]
        lines.append("")
        lines.append(f"{run['agent']} on {run['split']} ({run['rows']} scenarios): "
                     f"{run['field']} accuracy {run['baseline_accuracy']:.3f} (modal share "
                     f"{modal:.3f}); {run['used_columns']} of {run['columns']} columns used; "
                     f"drop = mean over {run['repeats']} shuffles (s.d.)")
        lines.append("  counts: " + "  ".join(f"{v}={run['outcome_counts'][v]}"
                                              for v in values))
        head = f"  {'drop':>7} {'s.d.':>6}  " + "  ".join(f"{v[:12]:>12}" for v in values)
        lines.append(head + "  feature (mean by expected value; - absent)")
        for row in run["features"]:
            cells = "  ".join(f"{_cell(row['mean_by_outcome'][v]):>12}" for v in values)
            lines.append(f"  {row['drop']:7.4f} {row['sd']:6.4f}  {cells}  {row['feature']}")
        lines.append(f"  {'drop':>7} {'s.d.':>6}  family (columns; strongest members)")
        for row in run["families"]:
            lines.append(f"  {row['drop']:7.4f} {row['sd']:6.4f}  {row['family']} "
                         f"({row['columns']}; {', '.join(row['top_columns'])})")
    return "\n".join(lines)
