"""Shortcut audit for ``medical_coding``: can the coding arena be won without coding?

The billing audit (:mod:`.audit`) fits shortcut agents on train and plays them on dev/test; the
coding arena gets its own shortcuts because its answer is a code list, not a class:

* ``constant`` -- submits the most common train answer (primary, secondaries, CPT) for every
  note: what the label distribution alone is worth;
* ``phrase_memorizer`` -- a phrase -> code table learned from train: every assessment item,
  chief complaint and plan sentence (numbers masked) votes for the codes of the train cases it
  occurred in, and a unit whose votes are precise enough predicts its code. This is the agent
  that scored 0.91 on test when dev/test notes reused train phrases (issue 9);
* ``top_search_hit`` -- the first billable ``search_icd10`` hit for each assessment item and the
  chief complaint, and a mid-level office visit: what the lookup tools give without judgment.

Next to them the reference agents (oracle, heuristic, random). A sound split has the heuristic,
which reads the note, above every shortcut and the memorizer well below the oracle.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from .env import make
from .scenario_store import load_scenario
from .splits import seeds
from .tasks.medical_coding import heuristic as coding_heuristic
from .tasks.medical_coding.search import search_icd10

TASK = "medical_coding"
_NUM = re.compile(r"\d+(\.\d+)?")
_EM = re.compile(r"^992\d\d")
_ICD = re.compile(r"^[A-Z]\d[0-9A-Z](\.[0-9A-Z]{1,4})?$")


def _units(note: str) -> list[tuple[str, str]]:
    """(section, normalised text) units of a note: assessment items, the chief complaint and
    every other sentence, numbers masked so a memorizer can match across notes."""
    sec = coding_heuristic._sections(note)
    out = []
    for item in coding_heuristic._problems(sec.get("assessment", "")):
        out.append(("assessment", _norm(item)))
    if sec.get("cc"):
        out.append(("cc", _norm(sec["cc"])))
    for key in ("hpi", "pmh", "meds", "exam", "plan"):
        for s in re.split(r"(?<=[.;])\s+", sec.get(key, "")):
            if s.strip():
                out.append((key, _norm(s)))
    return out


def _norm(text: str) -> str:
    return _NUM.sub("#", text.lower()).strip(" .;")


def _submit(primary: str, secondary: list[str], cpt: list[str]) -> dict[str, Any]:
    return {"action_type": "submit_codes",
            "parameters": {"primary_icd10": primary, "secondary_icd10s": secondary,
                           "cpt_codes": cpt}}


def _train_cases(limit: int | None = None) -> list[dict[str, Any]]:
    out = []
    for seed in list(seeds("train", TASK))[:limit]:
        out.extend(load_scenario(TASK, seed)["cases"])
    return out


class ConstantAgent:
    """The modal train answer for every note."""

    name = "constant"

    def __init__(self, cases: list[dict[str, Any]]) -> None:
        exp = [c["expected"] for c in cases]
        self.primary = Counter(e["primary_icd10"] for e in exp).most_common(1)[0][0]
        self.cpt = [Counter(c for e in exp for c in e["cpt_codes"]).most_common(1)[0][0]]

    def reset(self, observation: Any) -> None:
        """Nothing to carry between notes."""

    def act(self, observation: Any) -> dict[str, Any]:
        return _submit(self.primary, [], list(self.cpt))


class PhraseMemorizer:
    """Phrase -> code votes learned from train (see the module docstring)."""

    name = "phrase_memorizer"

    def __init__(self, cases: list[dict[str, Any]], *, precision: float = 0.6,
                 min_count: int = 2) -> None:
        votes: dict[str, Counter[str]] = defaultdict(Counter)
        seen: Counter[str] = Counter()
        primary_votes: dict[str, Counter[str]] = defaultdict(Counter)
        for c in cases:
            e = c["expected"]
            codes = [e["primary_icd10"], *e["secondary_icd10s"], *e["cpt_codes"]]
            for sec, unit in set(_units(c["clinical_note"])):
                seen[unit] += 1
                votes[unit].update(codes)
                if sec == "cc":
                    primary_votes[unit][e["primary_icd10"]] += 1
        self.primary = {u: c.most_common(1)[0][0] for u, c in primary_votes.items()}
        # unit -> [(code, share of the unit's train cases that carry the code)]
        self.table: dict[str, list[tuple[str, float]]] = {}
        for unit, counter in votes.items():
            if seen[unit] >= min_count:
                hits = sorted((code, n / seen[unit]) for code, n in counter.items()
                              if n / seen[unit] >= precision)
                if hits:
                    self.table[unit] = hits

    def reset(self, observation: Any) -> None:
        """Nothing to carry between notes."""

    def act(self, observation: Any) -> dict[str, Any]:
        note = getattr(observation, "clinical_note", "") or ""
        icd: list[str] = []
        cpt: list[str] = []
        em: tuple[str, float] | None = None
        primary = ""
        for sec, unit in _units(note):
            if sec == "cc" and unit in self.primary:
                primary = self.primary[unit]
            for code, share in self.table.get(unit, ()):
                if _EM.match(code):
                    if em is None or share > em[1]:
                        em = (code, share)
                elif _ICD.match(code):
                    if code not in icd:
                        icd.append(code)
                elif code not in cpt:
                    cpt.append(code)
        if not primary and icd:
            primary = icd[0]
        secondary = [c for c in icd if c != primary]
        return _submit(primary, secondary, ([em[0]] if em else []) + cpt)


class TopSearchHit:
    """The first billable search hit per assessment item; a mid-level office visit."""

    name = "top_search_hit"

    def __init__(self, reference: Any) -> None:
        self.ref = reference

    def reset(self, observation: Any) -> None:
        """Nothing to carry between notes."""

    def _hit(self, phrase: str) -> str | None:
        for h in search_icd10(self.ref, phrase, 10):
            if h["billable"]:
                return h["code"]
        return None

    def act(self, observation: Any) -> dict[str, Any]:
        note = getattr(observation, "clinical_note", "") or ""
        sec = coding_heuristic._sections(note)
        codes: list[str] = []
        for phrase in [sec.get("cc", ""), *coding_heuristic._problems(sec.get("assessment", ""))]:
            code = self._hit(phrase) if phrase.strip() else None
            if code and code not in codes:
                codes.append(code)
        new = bool(re.search(r"\bnew (patient|pt)\b", note, re.I))
        return _submit(codes[0] if codes else "", codes[1:], ["99203" if new else "99213"])


def agents(reference: Any, train_limit: int | None = None
           ) -> dict[str, tuple[str, Callable[[], Any]]]:
    """name -> (kind, factory) for the reference and shortcut agents."""
    from .agents import make_agent

    cases = _train_cases(train_limit)
    constant = ConstantAgent(cases)
    memorizer = PhraseMemorizer(cases)
    episodes = itertools.count()
    return {
        "oracle": ("reference", lambda: make_agent("oracle", TASK)),
        "heuristic": ("reference",
                      lambda: coding_heuristic.HeuristicAgent(reference=reference)),
        "random": ("reference", lambda: make_agent("random", TASK, seed=next(episodes))),
        "constant": ("shortcut", lambda: constant),
        "phrase_memorizer": ("shortcut", lambda: memorizer),
        "top_search_hit": ("shortcut", lambda: TopSearchHit(reference)),
    }


def _play(env: Any, agent: Any, seed: int) -> dict[str, Any]:
    obs = env.reset(seed=seed)
    if getattr(agent, "privileged", False):
        agent.reset(obs, seed=seed, scenario=env.scenario)
    else:
        agent.reset(obs)
    res = None
    for _ in range(env.task.api_call_budget + 5):
        res = env.step(agent.act(obs))
        obs = res.observation
        if res.done:
            break
    return (res.info.get("grade") if res else None) or {}


def audit(split: str, *, limit: int | None = None, train_limit: int | None = None,
          agent_names: Iterable[str] | None = None, progress: bool = False) -> dict[str, Any]:
    """Every reference and shortcut agent on ``split``: mean reward (the grade's score), exact
    match, and mean reward by tier (curated catalog vs tabular)."""
    env = make(TASK, split=split)
    table = agents(env.reference, train_limit)
    if agent_names is not None:
        wanted = list(agent_names)
        unknown = [a for a in wanted if a not in table]
        if unknown:
            raise ValueError(f"unknown audit agent(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(table)}")
        table = {a: table[a] for a in wanted}
    split_seeds = list(seeds(split, TASK))[:limit]
    rows = []
    for name, (kind, factory) in table.items():
        scores, exact, by_tier = [], [], defaultdict(list)
        for seed in split_seeds:
            grade = _play(env, factory(), seed)
            scores.append(grade.get("score", 0.0))
            tiers = [c.get("tier", 1) for c in env.scenario["cases"]]
            for case, tier in zip(grade.get("cases", []), tiers, strict=False):
                exact.append(case.get("reward", 0.0) == 1.0)
                by_tier[tier].append(case.get("reward", 0.0))
        n = len(scores) or 1
        rows.append({"agent": name, "kind": kind, "episodes": len(scores),
                     "mean_reward": round(sum(scores) / n, 4),
                     "exact_match": round(sum(exact) / (len(exact) or 1), 4),
                     "by_tier": {str(t): round(sum(v) / len(v), 4)
                                 for t, v in sorted(by_tier.items())}})
        if progress:
            print(f"audit medical_coding {name}: {rows[-1]['mean_reward']:.3f}")
    env.close()
    shortcuts = [r for r in rows if r["kind"] == "shortcut"]
    return {"task": TASK, "kind": "coding", "split": split, "scenarios": len(split_seeds),
            "agents": rows,
            "best_shortcut": max((r["mean_reward"] for r in shortcuts), default=0.0)}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"audit task={report['task']} split={report['split']} "
             f"scenarios={report['scenarios']} (shortcuts fitted on train)",
             f"{'agent':<22}{'kind':>10}{'reward':>9}{'exact':>8}{'tier 1':>9}{'tier 2':>9}"]
    for r in report["agents"]:
        t = r["by_tier"]
        lines.append(f"{r['agent']:<22}{r['kind']:>10}{r['mean_reward']:>9.3f}"
                     f"{r['exact_match']:>8.3f}{t.get('1', 0.0):>9.3f}{t.get('2', 0.0):>9.3f}")
    lines.append(f"best shortcut: mean reward {report['best_shortcut']:.3f}")
    return "\n".join(lines)
