"""``clarus report``: one self-contained HTML file comparing agents from stored results files
(``clarus eval --out``, ``clarus infer --out``).

Charts are drawn by matplotlib as SVG and inlined, so the file opens offline with nothing to
fetch (no script at all). Every figure is computed from the stored episodes, not from the
files' summaries, so files written by different versions are compared on the same
definitions (outcome accuracy and pass^k as in ``clarus eval``). The same inputs give the
same bytes: SVG ids are salted with a constant and prefixed per figure, and no date is
written.
"""

from __future__ import annotations

import html
import io
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from . import __version__
from .evaluation import RESULTS_FORMAT, coding_metrics, outcome_correct, pass_hat_k

CODING_TASK = "medical_coding"
DIFFICULTIES = ("easy", "medium", "hard")


class ReportError(ValueError):
    """A results file the report cannot use; the message names the file and the problem."""


def load_results(paths: list[str]) -> list[dict[str, Any]]:
    """Read the files and give each a unique agent label (``agent``, ``agent (model)`` for
    ``clarus infer``, then the file name where two labels would collide, then a number)."""
    runs = []
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text())
        except FileNotFoundError:
            raise ReportError(f"{path}: no such file") from None
        except json.JSONDecodeError as exc:
            raise ReportError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT:
            got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ReportError(f"{path}: not a {RESULTS_FORMAT} file (format {got!r}); write "
                              f"one with clarus eval --out or clarus infer --out")
        if not isinstance(doc.get("episodes"), list) or not doc["episodes"]:
            raise ReportError(f"{path}: has no episodes")
        label = str(doc.get("agent", "agent"))
        if doc.get("model"):
            label = f"{label} ({doc['model']})"
        runs.append({"label": label, "path": str(path), "doc": doc})
    counts = Counter(r["label"] for r in runs)
    for r in runs:
        if counts[r["label"]] > 1:
            r["label"] = f"{r['label']} [{Path(r['path']).name}]"
    counts = Counter(r["label"] for r in runs)
    nth: Counter[str] = Counter()
    for r in runs:  # the same file given twice
        if counts[r["label"]] > 1:
            nth[r["label"]] += 1
            r["label"] = f"{r['label']} #{nth[r['label']]}"
    return runs


# ---------------------------------------------------------------- the numbers

def check_key(task: str, check_id: str) -> str:
    """Coding checks are numbered by case position (``case_2_hard``), which the seed's order
    decides; the heatmap compares them by difficulty instead."""
    if task == CODING_TASK and check_id.startswith("case_"):
        return f"{check_id.rsplit('_', 1)[-1]} case coded exactly"
    return check_id


def task_stats(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Per task and agent: outcome accuracy, pass^k and outcome pass^k for every k up to the
    trials run, scores, and per-check failures with example episodes."""
    per_seed: dict[int, list[bool]] = defaultdict(list)
    per_seed_outcome: dict[int, list[bool]] = defaultdict(list)
    fails: Counter[str] = Counter()
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    descriptions: dict[str, str] = {}
    scores = []
    for e in episodes:
        g = e.get("grade") or {"passed": 0, "total": 1, "score": 0.0, "checks": []}
        per_seed[e["seed"]].append(g["passed"] == g["total"])
        per_seed_outcome[e["seed"]].append(outcome_correct(e))
        scores.append(float(g.get("score", 0.0)))
        for c in g.get("checks", []):
            key = check_key(e["task"], c["id"])
            descriptions.setdefault(key, c.get("description", ""))
            fails[key] += 0
            if not c.get("passed"):
                fails[key] += 1
                if len(examples[key]) < 3:
                    examples[key].append({"seed": e["seed"], "trial": e.get("trial", 0),
                                          "detail": c.get("detail", "")})
    k_max = min(len(v) for v in per_seed.values())

    def curve(table: dict[int, list[bool]]) -> list[float]:
        return [sum(pass_hat_k(sum(v), len(v), k) for v in table.values()) / len(table)
                for k in range(1, k_max + 1)]

    n = len(episodes)
    return {"episodes": n, "scenarios": len(per_seed),
            "outcome_accuracy": sum(sum(v) for v in per_seed_outcome.values()) / n,
            "pass_hat_k": curve(per_seed), "outcome_pass_hat_k": curve(per_seed_outcome),
            "mean_score": sum(scores) / n, "scores": scores,
            "fail_rate": {c: fails[c] / n for c in fails}, "examples": dict(examples),
            "descriptions": descriptions}


def coding_stats(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Per difficulty: mean reward and ICD-10-CM / CPT micro-F1 (``coding_metrics`` over the
    cases of that difficulty), and the same over all cases."""
    cases = [c for e in episodes for c in e.get("cases", [])]
    out: dict[str, Any] = {"all": coding_metrics([{"cases": cases}])}
    for d in DIFFICULTIES:
        mine = [c for c in cases if c.get("difficulty") == d]
        if mine:
            m = coding_metrics([{"cases": mine}])
            out[d] = {"mean_reward": sum(c["reward"] for c in mine) / len(mine),
                      "icd10cm_f1": m["icd10cm_micro_f1"], "cpt_f1": m["cpt_micro_f1"],
                      "cases": len(mine)}
    return out


def compute(runs: list[dict[str, Any]]) -> dict[str, Any]:
    tasks: list[str] = []
    for r in runs:
        for e in r["doc"]["episodes"]:
            if e["task"] not in tasks:
                tasks.append(e["task"])
    stats: dict[str, dict[str, Any]] = {t: {} for t in tasks}
    coding: dict[str, Any] = {}
    for r in runs:
        by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in r["doc"]["episodes"]:
            by_task[e["task"]].append(e)
        for t, eps in by_task.items():
            stats[t][r["label"]] = task_stats(eps)
            if t == CODING_TASK and any(e.get("cases") for e in eps):
                coding[r["label"]] = coding_stats(eps)
    return {"tasks": tasks, "agents": [r["label"] for r in runs], "stats": stats,
            "coding": coding}


# ---------------------------------------------------------------- the charts

def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "clarus-report", "svg.fonttype": "none",
                         "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False, "figure.dpi": 100})
    return plt


_ID = re.compile(r'\bid="([^"]+)"')


def svg(fig: Any, name: str) -> str:
    """The figure as inline SVG: no XML prolog, no date, ids prefixed with ``name`` so that
    several figures in one page never share an id."""
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None},
                bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)  # RDF boilerplate
    ids = set(_ID.findall(text))
    text = _ID.sub(lambda m: f'id="{name}-{m.group(1)}"', text)
    text = re.sub(r'(url\(#|href="#)([^")]+)',
                  lambda m: f"{m.group(1)}{name}-{m.group(2)}" if m.group(2) in ids
                  else m.group(0), text)
    return text


def _colors(agents: list[str]) -> dict[str, Any]:
    cmap = _plt().get_cmap("tab10")
    return {a: cmap(i % 10) for i, a in enumerate(agents)}


def chart_outcome(data: dict[str, Any]) -> str:
    plt = _plt()
    tasks, agents = data["tasks"], data["agents"]
    colors = _colors(agents)
    fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(tasks)), 3.2))
    width = 0.8 / max(1, len(agents))
    for i, a in enumerate(agents):
        xs = [j + i * width for j, t in enumerate(tasks) if a in data["stats"][t]]
        ys = [data["stats"][t][a]["outcome_accuracy"] for t in tasks if a in data["stats"][t]]
        bars = ax.bar(xs, ys, width, label=a, color=colors[a])
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(tasks))], tasks)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("outcome accuracy")
    ax.legend(fontsize=8, frameon=False, ncols=min(4, len(agents)), loc="lower center",
              bbox_to_anchor=(0.5, 1.0))
    return svg(fig, "outcome")


def chart_pass_k(data: dict[str, Any]) -> str:
    plt = _plt()
    tasks, agents = data["tasks"], data["agents"]
    colors = _colors(agents)
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3), squeeze=False,
                             sharey=True)
    for ax, t in zip(axes[0], tasks, strict=True):
        for a in agents:
            s = data["stats"][t].get(a)
            if not s:
                continue
            ks = list(range(1, len(s["pass_hat_k"]) + 1))
            ax.plot(ks, s["pass_hat_k"], marker="o", color=colors[a], label=f"{a} pass^k")
            ax.plot(ks, s["outcome_pass_hat_k"], marker="s", linestyle="--", color=colors[a],
                    alpha=0.6, label=f"{a} outcome pass^k")
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("k")
        ax.set_ylim(-0.02, 1.05)
        ax.xaxis.get_major_locator().set_params(integer=True)
    axes[0][0].set_ylabel("pass^k")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncols=min(4, len(labels)), fontsize=7,
               frameon=False, bbox_to_anchor=(0.5, -0.02))
    return svg(fig, "passk")


def chart_scores(data: dict[str, Any]) -> str:
    plt = _plt()
    tasks, agents = data["tasks"], data["agents"]
    colors = _colors(agents)
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3), squeeze=False,
                             sharey=True)
    for ax, t in zip(axes[0], tasks, strict=True):
        present = [a for a in agents if a in data["stats"][t]]
        parts = ax.boxplot([data["stats"][t][a]["scores"] for a in present],
                           orientation="horizontal", widths=0.6, patch_artist=True, showfliers=True)
        for patch, a in zip(parts["boxes"], present, strict=True):
            patch.set_facecolor(colors[a])
            patch.set_alpha(0.7)
        ax.set_yticks(range(1, len(present) + 1), present)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("score (passed + 0.5) / (total + 1)")
    return svg(fig, "scores")


def chart_heatmap(data: dict[str, Any], task: str, name: str) -> str:
    plt = _plt()
    agents = [a for a in data["agents"] if a in data["stats"][task]]
    checks: list[str] = []
    for a in agents:
        for c in data["stats"][task][a]["fail_rate"]:
            if c not in checks:
                checks.append(c)
    grid = [[data["stats"][task][a]["fail_rate"].get(c, float("nan")) for c in checks]
            for a in agents]
    fig, ax = plt.subplots(figsize=(max(5, 0.32 * len(checks) + 2), 0.45 * len(agents) + 2.2))
    mesh = ax.pcolormesh(grid, cmap="Reds", vmin=0, vmax=1, edgecolors="white", linewidth=0.5)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v and v > 0:  # not NaN
                ax.text(j + 0.5, i + 0.5, f"{v:.0%}", ha="center", va="center", fontsize=6,
                        color="white" if v > 0.6 else "black")
    ax.set_xticks([j + 0.5 for j in range(len(checks))], checks, rotation=60, ha="right",
                  fontsize=7)
    ax.set_yticks([i + 0.5 for i in range(len(agents))], agents)
    ax.invert_yaxis()
    ax.set_title(f"{task}: share of episodes failing each check", fontsize=9)
    fig.colorbar(mesh, ax=ax, fraction=0.025, pad=0.01)
    return svg(fig, name)


def chart_coding(data: dict[str, Any]) -> str:
    plt = _plt()
    agents = list(data["coding"])
    colors = _colors(data["agents"])
    fig, axes = plt.subplots(1, 3, figsize=(10, 3), sharey=True)
    width = 0.8 / max(1, len(agents))
    for ax, (key, title) in zip(axes, (("mean_reward", "mean reward"),
                                       ("icd10cm_f1", "ICD-10-CM micro-F1"),
                                       ("cpt_f1", "CPT micro-F1")), strict=True):
        for i, a in enumerate(agents):
            diffs = [d for d in DIFFICULTIES if d in data["coding"][a]]
            xs = [DIFFICULTIES.index(d) + i * width for d in diffs]
            bars = ax.bar(xs, [data["coding"][a][d][key] for d in diffs], width, label=a,
                          color=colors[a])
            ax.bar_label(bars, fmt="%.2f", fontsize=6)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(3)], DIFFICULTIES)
        ax.set_title(title, fontsize=9)
        ax.set_ylim(0, 1.1)
    axes[0].legend(fontsize=7, frameon=False)
    return svg(fig, "coding")


# ---------------------------------------------------------------- the page

CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1rem 1.5rem;
color:#1d2330;font-size:14px}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:2px solid #172033}h3{font-size:1rem}table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d9dde5;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:.5rem 0 1rem;overflow-x:auto}figure svg{max-width:100%;height:auto}
figcaption{color:#4a5366;font-size:.85rem}.muted{color:#6b7385}code{font-size:.85em}
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _figure(svg_text: str, caption: str, chart_id: str) -> str:
    return (f'<figure class="chart" id="chart-{chart_id}">{svg_text}'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def render_html(runs: list[dict[str, Any]], title: str = "Clarus evaluation report") -> str:
    data = compute(runs)
    tasks, agents = data["tasks"], data["agents"]
    out = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
           f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{_e(title)}</h1>",
           "<p class='muted'>Generated by <code>clarus report</code> "
           f"(clarus {_e(__version__)}) from: "
           + ", ".join(f"<code>{_e(Path(r['path']).name)}</code> ({_e(r['label'])}, split "
                       f"{_e(r['doc'].get('split', '?'))}, {len(r['doc']['episodes'])} "
                       "episodes)" for r in runs) + ".</p>"]
    usage = [r for r in runs if isinstance(r["doc"].get("usage"), dict)]
    if usage:  # clarus infer's token (and, given prices, cost) tally per run
        out.append("<table id='usage'><thead><tr><th>agent</th><th>prompt tokens</th>"
                   "<th>completion tokens</th><th>cost (USD)</th></tr></thead><tbody>")
        for r in usage:
            u = r["doc"]["usage"]
            cost = u.get("cost_usd")
            out.append(f"<tr><td>{_e(r['label'])}</td>"
                       f"<td class='num'>{int(u.get('prompt_tokens', 0)):,}</td>"
                       f"<td class='num'>{int(u.get('completion_tokens', 0)):,}</td>"
                       f"<td class='num'>{'—' if cost is None else f'{float(cost):.4f}'}</td>"
                       "</tr>")
        out.append("</tbody></table>")
    # summary table
    out.append("<h2>Summary</h2><p>Outcome accuracy: the share of episodes whose every "
               "outcome check passed (for medical_coding, every case coded exactly). pass^k: "
               "the chance that k trials of a scenario all pass every check. The score is the "
               "seed's Laplace score, reported last because process credit inflates it.</p>")
    out.append("<table id='summary'><thead><tr><th>task</th><th>agent</th><th>scenarios</th>"
               "<th>episodes</th><th>outcome accuracy</th><th>pass^1</th><th>pass^k (k max)"
               "</th><th>mean score</th></tr></thead><tbody>")
    for t in tasks:
        for a in agents:
            s = data["stats"][t].get(a)
            if not s:
                continue
            k = len(s["pass_hat_k"])
            out.append(f"<tr><td>{_e(t)}</td><td>{_e(a)}</td><td class='num'>{s['scenarios']}"
                       f"</td><td class='num'>{s['episodes']}</td><td class='num'>"
                       f"{s['outcome_accuracy']:.3f}</td><td class='num'>{s['pass_hat_k'][0]:.3f}"
                       f"</td><td class='num'>{s['pass_hat_k'][-1]:.3f} (k={k})</td>"
                       f"<td class='num'>{s['mean_score']:.3f}</td></tr>")
    out.append("</tbody></table>")
    out.append("<h2>Outcome accuracy</h2>" + _figure(chart_outcome(data),
               "Outcome accuracy per task and agent.", "outcome"))
    out.append("<h2>pass^k over k</h2>" + _figure(chart_pass_k(data),
               "pass^k (every check, solid) and outcome pass^k (dashed) for k = 1 … trials "
               "run; a flat line means the agent is deterministic.", "passk"))
    out.append("<h2>Score distributions</h2>" + _figure(chart_scores(data),
               "Distribution of the episode score per task and agent.", "scores"))
    out.append("<h2>Which checks fail</h2>")
    for i, t in enumerate(tasks):
        out.append(_figure(chart_heatmap(data, t, f"heat{i}"),
                           f"{t}: failure rate of every check (agents × checks).", f"heat-{t}"))
    out.append("<h2>Most-failed checks, with example episodes</h2><p>Open an example in the "
               "<code>/web</code> page's Replay tab (load the same results file) to step "
               "through it.</p>")
    for t in tasks:
        rates: Counter[str] = Counter()
        for a in agents:
            for c, r in data["stats"][t].get(a, {}).get("fail_rate", {}).items():
                rates[c] = max(rates[c], r)
        worst = [c for c, r in rates.most_common(5) if r > 0]
        out.append(f"<h3>{_e(t)}</h3>")
        if not worst:
            out.append("<p class='muted'>No check failed.</p>")
            continue
        out.append(f"<table class='most-failed' data-task='{_e(t)}'><thead><tr><th>check</th>"
                   "<th>what it checks</th>" + "".join(f"<th>{_e(a)}</th>" for a in agents)
                   + "<th>example episodes (agent, seed, trial: reason)</th></tr></thead>"
                   "<tbody>")
        for c in worst:
            desc = next((data["stats"][t][a]["descriptions"].get(c) for a in agents
                         if c in data["stats"][t].get(a, {}).get("descriptions", {})), "")
            cells = "".join(
                f"<td class='num'>{data['stats'][t][a]['fail_rate'][c]:.0%}</td>"
                if a in data["stats"][t] and c in data["stats"][t][a]["fail_rate"]
                else "<td class='muted'>—</td>" for a in agents)
            ex = [f"{_e(a)}, seed {x['seed']}, trial {x['trial']}: {_e(x['detail'])}"
                  for a in agents for x in data["stats"][t].get(a, {}).get("examples", {})
                  .get(c, [])[:2]]
            out.append(f"<tr><td><code>{_e(c)}</code></td><td>{_e(desc)}</td>{cells}<td>"
                       + "<br>".join(ex[:4]) + "</td></tr>")
        out.append("</tbody></table>")
    if data["coding"]:
        out.append("<h2>medical_coding by difficulty</h2>")
        out.append(_figure(chart_coding(data), "Mean case reward and micro-F1 of ICD-10-CM "
                           "and CPT codes per case difficulty.", "coding"))
        out.append("<table id='coding'><thead><tr><th>agent</th><th>cases</th><th>exact match"
                   "</th><th>ICD-10-CM micro-F1</th><th>CPT micro-F1</th>"
                   + "".join(f"<th>{d} reward</th>" for d in DIFFICULTIES)
                   + "</tr></thead><tbody>")
        for a, c in data["coding"].items():
            al = c["all"]
            out.append(f"<tr><td>{_e(a)}</td><td class='num'>{al['cases']}</td>"
                       f"<td class='num'>{al['exact_match_rate']:.3f}</td>"
                       f"<td class='num'>{al['icd10cm_micro_f1']:.3f}</td>"
                       f"<td class='num'>{al['cpt_micro_f1']:.3f}</td>"
                       + "".join(f"<td class='num'>{c[d]['mean_reward']:.3f}</td>" if d in c
                                 else "<td>—</td>" for d in DIFFICULTIES) + "</tr>")
        out.append("</tbody></table>")
    out.append("</body></html>\n")
    return "".join(out)


def write_report(paths: list[str], out: str, title: str | None = None) -> str:
    """Render the report of ``paths`` to ``out`` (written whole or not at all)."""
    import os

    text = render_html(load_results(paths), title or "Clarus evaluation report")
    target = Path(out)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, target)
    return str(target)
