"""`clarus audit --replicates N`: the same audit on N fresh salted replicates of a task.

Why: one audit reads one split of a few hundred scenarios, and where a task's pass bar (the
most common whole answer's share + 0.05) sits a point or two above where a learner at chance
lands, *which* learned shortcut crosses the bar changes with every regeneration of the
splits. A cue is a shortcut that crosses in every replicate; luck is one that crosses in
some. A replicate is the whole audit (train, dev and test compiled afresh from the same
generators) under a private salt (``CLARUS_SCENARIO_SALT``, see ``scenario.scenario_salt``):
same generators, same distribution, same agents, other scenarios.

Replicate ``i`` (0-based) uses the salt ``f"{prefix}-{i}"``; if the caller had already set a
salt ``S``, ``f"{S}-{prefix}-{i}"`` (a replicate of the caller's private set, not of the
public one). The caller's environment is restored after the replicates, also on error.
Each replicate's verdicts come from ``audit.verdict`` itself, applied to one agent at a time,
so the bars here are the audit's bars by construction.

The ``replicates`` key of ``clarus audit --out`` (``format`` ``clarus-audit-replicates``,
``version`` 1)::

    {"format": "clarus-audit-replicates", "version": 1, "count": N, "prefix": P,
     "base_salt": S or "", "salts": [salt, ...],
     "skipped": [task, ...],                 # tasks not replicated (medical_coding)
     "runs": [{"salt": salt, "reports": [report, ...]}, ...],  # each replicate's audit,
                                             # as the top-level "reports" (all tasks)
     "summary": {task: {split: {
         "scenarios": int, "replicates": N,
         "agents": [{"agent", "kind", "pass_rates": [per replicate], "pass_mean",
                     "pass_min", "pass_max", "over_bar": replicates over its bar,
                     "over_bar_in": [bool per replicate]}, ...],   # in the audit's order
         "per_replicate": [{"salt", "modal_outcome_share", "pass_bar",
                            "best": {"agent", "pass_rate"} or None,  # best shortcut/exploit
                            "selected_on_dev": the audit's "pass" pick or None (test only),
                            "verdict": audit.verdict's line}, ...],
         "consistent": [agents over their bar in every replicate],
         "varying": {agent: replicates over the bar, for the others that ever cross},
         "verdict": one line}}}}

Everything is deterministic: the same N and prefix give the same numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .audit import BILLING_TASKS, PASS_SLACK, audit_splits, verdict
from .scenario import SALT_ENV

REPLICATES_FORMAT = "clarus-audit-replicates"
REPLICATES_VERSION = 1
DEFAULT_PREFIX = "replicate"
HELD = "shortcut bar held"  # how audit.verdict begins when nothing crosses


def replicate_salts(count: int, prefix: str = DEFAULT_PREFIX, base: str = "") -> list[str]:
    """The salts of ``count`` replicates: ``prefix-i``, under the caller's own salt if any
    (so replicating a private set stays private and distinct from the public replicates)."""
    if count < 1:
        raise ValueError(f"--replicates must be at least 1, got {count}")
    if not prefix:
        raise ValueError("the replicate salt prefix must not be empty")
    stem = f"{base}-{prefix}" if base else prefix
    return [f"{stem}-{i}" for i in range(count)]


@contextmanager
def salted(salt: str) -> Iterator[None]:
    """Set ``CLARUS_SCENARIO_SALT`` for the block and put the caller's value (or its absence)
    back afterwards, whatever happens inside: a later audit in the same process must read
    the caller's scenarios, not the last replicate's."""
    before = os.environ.get(SALT_ENV)
    os.environ[SALT_ENV] = salt
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SALT_ENV, None)
        else:
            os.environ[SALT_ENV] = before


def run_replicates(task: str, splits: Sequence[str], salts: Sequence[str], *,
                   audit: Callable[..., list[dict[str, Any]]] = audit_splits,
                   **options: Any) -> list[dict[str, Any]]:
    """``audit(task, splits, **options)`` once under each salt: ``[{"salt", "reports"}]``.
    ``audit`` is ``audit.audit_splits`` (a parameter so tests can plant a failure)."""
    runs = []
    for salt in salts:
        with salted(salt):
            runs.append({"salt": salt, "reports": audit(task, list(splits), **options)})
    return runs


def over_bar(report: dict[str, Any], row: dict[str, Any]) -> bool:
    """Whether one agent's row breaks the audit's bar on its report: ``audit.verdict`` on a
    report holding that row alone (reference and relation agents are held to no bar)."""
    return not verdict({**report, "agents": [row]}).startswith(HELD)


def _best(report: dict[str, Any]) -> dict[str, Any] | None:
    """The best shortcut or exploit by pass rate (the first listed of equals), as the audit's
    own ``best_shortcut`` counts them."""
    cands = [r for r in report["agents"] if r["kind"] in ("shortcut", "exploit")]
    if not cands:
        return None
    top = max(cands, key=lambda r: r["pass_rate"])
    return {"agent": top["agent"], "pass_rate": top["pass_rate"]}


def summarize_split(salts: Sequence[str], reports: Sequence[dict[str, Any]]
                    ) -> dict[str, Any]:
    """The replicate summary of one task's split from its per-replicate reports (same order
    as ``salts``). Pure: numbers in, numbers out, so it is tested on planted reports."""
    if len(salts) != len(reports) or not reports:
        raise ValueError("one report per replicate salt, at least one")
    n = len(reports)
    order: list[str] = []
    kind: dict[str, str] = {}
    rates: dict[str, list[float | None]] = {}
    over: dict[str, list[bool]] = {}
    for i, rep in enumerate(reports):
        for row in rep["agents"]:
            name = row["agent"]
            if name not in rates:
                order.append(name)
                kind[name] = row["kind"]
                rates[name] = [None] * n
                over[name] = [False] * n
            rates[name][i] = row["pass_rate"]
            over[name][i] = over_bar(rep, row)
    agents = []
    for name in order:
        got = [r for r in rates[name] if r is not None]
        agents.append({"agent": name, "kind": kind[name], "pass_rates": rates[name],
                       "pass_mean": round(sum(got) / len(got), 4),
                       "pass_min": min(got), "pass_max": max(got),
                       "over_bar": sum(over[name]), "over_bar_in": over[name]})
    per = []
    for salt, rep in zip(salts, reports, strict=True):
        sel = (rep.get("selected_on_dev") or {}).get("pass")
        per.append({"salt": salt, "modal_outcome_share": rep["modal_outcome"]["share"],
                    "pass_bar": round(rep["modal_outcome"]["share"] + PASS_SLACK, 4),
                    "best": _best(rep), "selected_on_dev": sel, "verdict": verdict(rep)})
    consistent = [a["agent"] for a in agents if a["over_bar"] == n]
    varying = {a["agent"]: a["over_bar"] for a in agents if 0 < a["over_bar"] < n}
    return {"scenarios": reports[0]["scenarios"], "replicates": n, "agents": agents,
            "per_replicate": per, "consistent": consistent, "varying": varying,
            "verdict": replicate_verdict(consistent, varying, n)}


def replicate_verdict(consistent: Sequence[str], varying: dict[str, int], n: int) -> str:
    """One line: a cue crosses the bar in every replicate; chance crosses in some."""
    vary = ", ".join(f"{a} {k}/{n}" for a, k in varying.items())
    if consistent:
        line = (f"consistent leak: {', '.join(consistent)} over the bar in all {n} "
                f"replicates")
        return line + (f"; crossings vary for {vary}" if vary else "")
    if varying:
        return (f"crossings vary by replicate: {vary} (no agent over its bar in all {n} "
                f"replicates)")
    return f"no crossing: every shortcut held its bar in all {n} replicates"


def summarize(runs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{task: {split: summarize_split(...)}}`` over ``run_replicates``' runs (of one or
    more tasks; each run's reports in the same task and split order)."""
    salts = [run["salt"] for run in runs]
    keyed: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run in runs:
        for rep in run["reports"]:
            if rep.get("kind") == "coding":
                continue
            keyed.setdefault((rep["task"], rep["split"]), []).append(rep)
    out: dict[str, dict[str, Any]] = {}
    for (task, split), reps in keyed.items():
        out.setdefault(task, {})[split] = summarize_split(salts, reps)
    return out


def replicates(tasks: Sequence[str], splits: Sequence[str], count: int,
               prefix: str = DEFAULT_PREFIX, **options: Any) -> dict[str, Any]:
    """Run and summarize ``count`` replicates of the billing ``tasks`` (the JSON documented
    above). medical_coding is skipped: its audit grades code lists with its own bars."""
    base = os.environ.get(SALT_ENV, "")
    salts = replicate_salts(count, prefix, base)
    billing = [t for t in tasks if t in BILLING_TASKS]
    runs: list[dict[str, Any]] = [{"salt": s, "reports": []} for s in salts]
    for task in billing:
        for run, got in zip(runs, run_replicates(task, splits, salts, **options), strict=True):
            run["reports"].extend(got["reports"])
    return {"format": REPLICATES_FORMAT, "version": REPLICATES_VERSION, "count": count,
            "prefix": prefix, "base_salt": base, "salts": salts,
            "skipped": [t for t in tasks if t not in BILLING_TASKS], "runs": runs,
            "summary": summarize(runs)}


def format_replicates(result: dict[str, Any]) -> str:
    """The summary as `clarus audit` prints it after the audit of the committed splits."""
    n = result["count"]
    lines = []
    if result["base_salt"]:
        lines.append(f"{SALT_ENV} was set by the caller: the replicates are salted under it "
                     f"({', '.join(result['salts'])})")
    for task in result["skipped"]:
        lines.append(f"replicates: {task} skipped (its audit grades code lists, not classes)")
    for task, by_split in result["summary"].items():
        for split, s in by_split.items():
            lines.append(f"replicates task={task} split={split}: {n} salted replicate(s) "
                         f"({', '.join(result['salts'])}), {s['scenarios']} scenarios each")
            lines.append(f"{'agent':<34}{'mean':>7}{'min':>7}{'max':>7}{'over bar':>10}")
            for a in s["agents"]:
                held = a["kind"] in ("shortcut", "exploit")
                mark = f"{a['over_bar']}/{n}" if held else "-"
                lines.append(f"{a['agent']:<34}{a['pass_mean']:>7.3f}{a['pass_min']:>7.3f}"
                             f"{a['pass_max']:>7.3f}{mark:>10}")
            for p in s["per_replicate"]:
                best = (f"best {p['best']['agent']} {p['best']['pass_rate']:.3f}"
                        if p["best"] else "no shortcut run")
                sel = p["selected_on_dev"]
                pick = (f"; selected on dev: {sel['agent']} {sel['test']:.3f} "
                        f"[{sel['test_ci'][0]:.3f}, {sel['test_ci'][1]:.3f}]" if sel else "")
                lines.append(f"  {p['salt']}: pass bar {p['pass_bar']:.3f}, {best}{pick}")
            lines.append(s["verdict"])
            lines.append("")
    return "\n".join(lines).rstrip("\n")
