"""`clarus audit`: the shortcut agents a benchmark must defeat, shipped with the benchmark.

An arena is only as good as its hardest shortcut. Each agent here wins — if it wins — without
the reasoning the task claims to test: it predicts the outcome from the modal class, from the
words of the complaint, from the codes on the claim, or from the counter-arguments' wording;
it farms shaping rewards, or cites every record it has seen. Every learned shortcut is fitted
on the **train** split only and measured on the split asked for.

All of them play through the task's observation-only heuristic (``HeuristicAgent``) with its
decision replaced (``decide``/``respond`` hooks), so they earn the same process credit as an
agent that reasons: what separates them from the heuristic is only the reasoning. A shortcut
answers every outcome field itself: the categorical fields from its rule, the amount from the
first dollar figure of the complaint (``amount_cue``) — never from the heuristic's arithmetic,
which is reasoning. (Lent the heuristic's amount, an always-X agent passes on exactly the
scenarios whose answer is X and where the heuristic is right: the pass rate of a constant
answer is bounded by its class's share, which the per-field figures already show.)

The audit also runs the heuristic with one kind of evidence hidden (``hide``): if the task is
sound, hiding the evidence it is about drops the heuristic to the shortcut level.

Everything is generic over the billing tasks: the outcome fields are read from each
scenario's ``expected`` table and the agent's answer from its episode database (the diagnosis
in force at the first filing, and the first filing), so it keeps working when generators
change.
"""

from __future__ import annotations

import datetime as dt
import importlib
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .env import make
from .evaluation import outcome_correct
from .scenario_store import load_scenario
from .splits import seeds
from .tasks import get_task
from .tasks.check_sql import DX_AT_FILING, FIRST_SUBMISSION

BILLING_TASKS = ("deductive_liability", "abductive_conflict", "adversarial_fabrication")
OUTCOME_FIELDS = ("finding", "responsible_party", "resolution_type", "appeal_reason")
# the evidence each task is about: hiding it must cost the heuristic its edge
ABLATIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "deductive_liability": (("processor_log",), ("payment_ledger",), ("eob",)),
    "abductive_conflict": (("provider_record",), ("ncci_edit",)),
    "adversarial_fabrication": (("processor_log",), ("processor_log", "facility_record")),
}
# every kind of record an agent reads: hiding them all leaves the complaint and the process
EVIDENCE_TYPES = frozenset(("claim_record", "eob", "provider_record", "payment_ledger",
                            "plan_document", "facility_record", "processor_log", "ncci_edit",
                            "code_reference"))
WORD = re.compile(r"[a-z][a-z0-9']+|\$?\d[\d,.]*")
ID_KEYS = ("claim_id", "plan_id", "facility_id")
FETCH_BY_KEY = {"claim_id": ("fetch_claim_record", "fetch_eob", "fetch_provider_record"),
                "plan_id": ("fetch_plan_document",), "facility_id": ("fetch_facility_record",)}


# -- what a scenario's answer is, and what an agent answered ---------------------------------
def label_of(expected: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The scenario's categorical outcome, as a hashable joint label."""
    return tuple((f, str(expected[f])) for f in OUTCOME_FIELDS if f in expected)


def answered(env: Any) -> dict[str, str | None]:
    """The agent's categorical answer, read as the grader reads it: the diagnosis in force at
    the first filing and the first filing itself."""
    db = env.db
    dx = db.execute(f"SELECT finding, responsible_party FROM {DX_AT_FILING}").fetchone()
    sub = db.execute(f"SELECT resolution_type, appeal_reason FROM {FIRST_SUBMISSION}"
                     ).fetchone()
    return {"finding": dx[0] if dx else None, "responsible_party": dx[1] if dx else None,
            "resolution_type": sub[0] if sub else None,
            "appeal_reason": (sub[1] or "none") if sub else None}


def tokens(text: str) -> list[str]:
    return WORD.findall(text.lower())


# -- a small multinomial naive Bayes (pure Python: the light package takes no ML stack) ------
class NaiveBayes:
    """Bag-of-words classifier with Laplace smoothing; deterministic tie-breaking.

    ``binary`` counts each word once per document and keeps only words in ``min_df`` or
    more documents and at most ``max_df`` of them: on long, record-shaped documents plain
    counts let the class with the shortest documents win every prediction."""

    def __init__(self, alpha: float = 1.0, *, binary: bool = False, min_df: int = 1,
                 max_df: float = 1.0) -> None:
        self.alpha, self.binary, self.min_df, self.max_df = alpha, binary, min_df, max_df

    def _doc(self, doc: list[str]) -> list[str]:
        if not self.binary:
            return doc
        return [w for w in sorted(set(doc)) if w in self.vocab]

    def fit(self, docs: Iterable[list[str]], labels: Iterable[Any]) -> NaiveBayes:
        docs, labels = list(docs), list(labels)
        self.vocab: set[str] = set()
        if self.binary:
            df = Counter(w for d in docs for w in set(d))
            self.vocab = {w for w, c in df.items()
                          if c >= self.min_df and c <= self.max_df * len(docs)}
        self.counts: dict[Any, Counter[str]] = defaultdict(Counter)
        self.priors: Counter[Any] = Counter()
        for doc, label in zip(docs, labels, strict=True):
            self.priors[label] += 1
            self.counts[label].update(self._doc(doc))
        self.vocab = {w for c in self.counts.values() for w in c}
        self.totals = {lab: sum(c.values()) for lab, c in self.counts.items()}
        self.n = sum(self.priors.values())
        self.labels = sorted(self.priors, key=repr)
        return self

    def predict(self, doc: list[str]) -> Any:
        doc = self._doc(doc)
        v = len(self.vocab) or 1
        best, best_lp = None, -math.inf
        for lab in self.labels:
            lp = math.log(self.priors[lab] / self.n)
            denom = self.totals[lab] + self.alpha * v
            c = self.counts[lab]
            lp += sum(math.log((c[w] + self.alpha) / denom) for w in doc if w in self.vocab)
            if lp > best_lp:
                best, best_lp = lab, lp
        return best


# -- training data: what a shortcut may see of a train scenario ------------------------------
def _first(scenario: dict[str, Any], atype: str) -> dict[str, Any] | None:
    """The data of the case's own record of a type (what an agent fetching by the case's key
    sees), falling back to any record of that type."""
    arts = [a for a in scenario["artifacts"] if a["type"] == atype]
    own = [a for a in arts if not a.get("distractor")]
    pick = (own or arts or [None])[0]
    return pick["data"] if pick else None


def claim_key(records: dict[str, Any], coarse: bool = False) -> tuple[Any, ...] | None:
    """The claim's billed codes and modifiers (from the claim record, else the EOB)."""
    data = records.get("claim_record") or records.get("eob")
    if not data:
        return None
    lines = data.get("lines") or []
    key = []
    for ln in lines:
        code = str(ln.get("hcpcs", ""))
        mods = tuple(sorted(str(m) for m in ln.get("modifiers", []) or []))
        key.append((code[:3] if coarse else code, bool(mods) if coarse else mods))
    return tuple(sorted(key))


@dataclass
class TrainSet:
    task: str
    scenarios: list[dict[str, Any]]
    labels: list[tuple[tuple[str, str], ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.labels = [label_of(s["expected"]) for s in self.scenarios]


def load_train(task: str, limit: int | None = None) -> TrainSet:
    return TrainSet(task, [load_scenario(task, s) for s in list(seeds("train", task))[:limit]])


def _modal(labels: list[Any]) -> Any:
    counts = Counter(labels)
    top = max(counts.values())
    return sorted((lab for lab, n in counts.items() if n == top), key=repr)[0]


# -- shortcut decision rules -----------------------------------------------------------------
Decide = Callable[[dict[str, Any]], dict[str, Any]]


AMOUNT = re.compile(r"\$\s?(\d[\d,]*(?:\.\d{2})?)")


def amount_cue(view: dict[str, Any]) -> int | None:
    """A shortcut's amount: the first dollar figure the complaint mentions (if the complaint
    states the overcharge, that is a leak the audit should find). Shortcuts never get the
    heuristic's arithmetic."""
    m = AMOUNT.search(view.get("complaint", "") or "")
    if not m:
        return None
    dollars, _, cents = m.group(1).replace(",", "").partition(".")
    return int(dollars) * 100 + int(cents or 0)


def _as_decision(label: tuple[tuple[str, str], ...], view: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """The shortcut's answer; a decision to do nothing states nothing owed ($0) — a constant
    "no_action, $0" answer must be tried, since an accepted no_action alternative could let it
    pass where a filing was expected."""
    outcome = dict(label)
    amount = 0 if outcome.get("resolution_type") == "no_action" else amount_cue(view or {})
    return {**outcome, "amount_cents": amount}


def modal_rule(train: TrainSet) -> Decide:
    label = _modal(train.labels)
    return lambda view: _as_decision(label, view)


def always_rules(train: TrainSet) -> dict[str, Decide]:
    """One rule per finding value: always answer that finding (with its most common party,
    resolution and reason on train) — and, where that answer files something, the same finding
    and party with no filing (``always_<finding>_no_action``, stating $0): a constant "nothing to
    file" answer can ride an accepted no_action alternative that train's most common answer
    never shows."""
    by_finding: dict[str, list[Any]] = defaultdict(list)
    resolutions = {dict(lab).get("resolution_type") for lab in train.labels}
    for lab in train.labels:
        by_finding[dict(lab).get("finding", "")].append(lab)
    rules: dict[str, Decide] = {}
    for f, labs in sorted(by_finding.items()):
        lab = _modal(labs)
        rules[f"always_{f}"] = lambda view, lab=lab: _as_decision(lab, view)
        if "no_action" in resolutions and dict(lab).get("resolution_type") != "no_action":
            quiet = tuple((k, "no_action" if k == "resolution_type" else
                           "none" if k == "appeal_reason" else v) for k, v in lab)
            rules[f"always_{f}_no_action"] = lambda view, lab=quiet: _as_decision(lab, view)
    return rules


def complaint_rule(train: TrainSet) -> Decide:
    nb = NaiveBayes().fit((tokens(s["case"]["patient_complaint"]) for s in train.scenarios),
                          train.labels)
    return lambda view: _as_decision(nb.predict(tokens(view.get("complaint", ""))), view)


def _flatten(obj: Any, path: str = "") -> list[str]:
    """A record as words: every key path and every value's tokens (surface, no semantics)."""
    if isinstance(obj, dict):
        return [w for k, v in sorted(obj.items()) for w in [k, *_flatten(v, k)]]
    if isinstance(obj, list):
        return [w for v in obj for w in _flatten(v, path)]
    return [f"{path}={t}" for t in tokens(str(obj))[:20]]


def records_rule(train: TrainSet) -> Decide:
    """Naive Bayes over the surface of every case record the agent reads (field names and
    value tokens): finds wording, labels and field presence that differ by branch."""
    types = sorted({a["type"] for s in train.scenarios for a in s["artifacts"]})

    def doc(records: dict[str, Any]) -> list[str]:
        return [f"{t}.{w}" for t in types if records.get(t) for w in _flatten(records[t])]

    nb = NaiveBayes(binary=True, min_df=5, max_df=0.95).fit(
        (doc({t: _first(s, t) for t in types}) for s in train.scenarios), train.labels)
    return lambda view: _as_decision(nb.predict(doc(view.get("records", {}))), view)


ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
MONEYISH = re.compile(r"^-?\$?\d[\d,]*(\.\d+)?$")
FEATURE_KINDS = ("numbers", "dates", "labels", "words")


def _features(obj: Any, path: str, out: dict[str, dict[str, float]]) -> None:
    """A record as features a tree can split on, by kind: every numeric or money value at its
    key path (list items by position), ISO dates as day numbers, short strings one-hot (with
    field presence), long strings as word presence. Nothing is computed from two fields: that
    would be reasoning."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            _features(v, f"{path}.{k}", out)
    elif isinstance(obj, list):
        out["labels"][f"{path}#n"] = float(len(obj))
        for i, v in enumerate(obj[:8]):
            _features(v, f"{path}[{i}]", out)
    elif isinstance(obj, (bool, int, float)):
        out["numbers"][path] = float(obj)
    elif isinstance(obj, str):
        text = obj.strip()
        if MONEYISH.match(text):
            out["numbers"][path] = float(text.replace("$", "").replace(",", ""))
        elif ISO_DATE.match(text):
            try:
                out["dates"][path] = float(dt.date.fromisoformat(text[:10]).toordinal())
            except ValueError:
                out["labels"][f"{path}={text[:40]}"] = 1.0
        elif len(text) <= 40:
            out["labels"][f"{path}={text}"] = 1.0
        else:
            for w in set(tokens(text)):
                if not w[0].isdigit():
                    out["words"][f"{path}~{w}"] = 1.0


def record_features(records: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Every case record's features, by kind (``FEATURE_KINDS``)."""
    out: dict[str, dict[str, float]] = {k: {} for k in FEATURE_KINDS}
    for t in sorted(records):
        if records[t]:
            _features(records[t], t, out)
    return out


def forest_rule(train: TrainSet) -> Decide | None:
    """Random forests over every value of every case record, fitted on train: per outcome
    field, one forest per kind of feature (amounts as printed, dates, short labels, words)
    and the one with the best out-of-bag accuracy kept — the generic learner that finds a
    surface correlation no hand-written shortcut thought of (words drown numbers in one
    mixed forest, so kinds are kept apart). None without scikit-learn
    (``pip install 'clarus[audit]'``)."""
    try:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.feature_extraction import DictVectorizer
    except ImportError:
        return None
    types = sorted({a["type"] for s in train.scenarios for a in s["artifacts"]})
    rows = [record_features({t: _first(s, t) for t in types}) for s in train.scenarios]
    fields = [f for f, _ in train.labels[0]]
    models: dict[str, tuple[str, Any, Any]] = {}
    for f in fields:
        y = [dict(lab)[f] for lab in train.labels]
        best: tuple[float, str, Any, Any] | None = None
        for kind in FEATURE_KINDS:
            if not any(r[kind] for r in rows):
                continue
            vec = DictVectorizer(sparse=True, sort=True)
            x = vec.fit_transform([r[kind] for r in rows])
            forest = RandomForestClassifier(n_estimators=150, min_samples_leaf=2,
                                            oob_score=True, random_state=0, n_jobs=1)
            forest.fit(x, y)
            if best is None or forest.oob_score_ > best[0]:
                best = (forest.oob_score_, kind, vec, forest)
        if best is not None:
            models[f] = best[1:]
    modal = dict(_modal(train.labels))

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        feats = record_features(view.get("records", {}))
        label = []
        for f in fields:
            if f in models:
                kind, vec, forest = models[f]
                label.append((f, str(forest.predict(vec.transform([feats[kind]]))[0])))
            else:
                label.append((f, modal[f]))
        return _as_decision(tuple(label), view)
    return decide


def claim_rule(train: TrainSet) -> Decide:
    """The claim-only memorizer: a table from the claim's codes and modifiers to the outcome
    (exact codes first, then code families and whether a modifier was appended)."""
    tables: list[dict[Any, Any]] = []
    for coarse in (False, True):
        votes: dict[Any, list[Any]] = defaultdict(list)
        for s, lab in zip(train.scenarios, train.labels, strict=True):
            recs = {t: _first(s, t) for t in ("claim_record", "eob")}
            key = claim_key(recs, coarse)
            if key is not None:
                votes[key].append(lab)
        tables.append({k: _modal(v) for k, v in votes.items()})
    fallback = _modal(train.labels)

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        for table, coarse in zip(tables, (False, True), strict=True):
            key = claim_key(view.get("records", {}), coarse)
            if key in table:
                return _as_decision(table[key], view)
        return _as_decision(fallback, view)

    return decide


def _claim_has_modifier(records: dict[str, Any]) -> bool | None:
    key = claim_key(records)
    return None if key is None else any(mods for _, mods in key)


def lookup_rule(train: TrainSet) -> Decide:
    """The lookup memorizer: a table from every categorical value of the case's reference
    lookups (an edit's status and modifier indicator, a deadline's flags — any field with two
    to six values on train) and whether the claim carries a modifier, to the outcome. It never
    opens the provider's notes: in abductive_conflict it is the rule "no edit → appeal,
    indicator 0 → denial stands, indicator 1 → appeal if a bypass modifier is on the claim,
    else corrected claim", the task's floor without the documentation."""
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for sc in train.scenarios:
        per = Counter(r["type"] for r in sc.get("references", []))
        for r in sc.get("references", []):
            if per[r["type"]] == 1 and isinstance(r.get("data"), dict):
                kinds[r["type"]].append(r["data"])
    fields: list[tuple[str, str]] = []
    for rtype, datas in sorted(kinds.items()):
        if len(datas) < len(train.scenarios):
            continue  # not looked up in every case
        names = sorted({k for d in datas for k, v in d.items()
                        if isinstance(v, bool | str) and len(str(v)) <= 24})
        for name in names:
            if 2 <= len({str(d.get(name)) for d in datas}) <= 6:
                fields.append((rtype, name))

    def key(records: dict[str, Any]) -> tuple[Any, ...]:
        return (*(str((records.get(t) or {}).get(f)) for t, f in fields),
                _claim_has_modifier(records))

    votes: dict[Any, list[Any]] = defaultdict(list)
    for sc, lab in zip(train.scenarios, train.labels, strict=True):
        recs: dict[str, Any] = {r["type"]: r["data"] for r in sc.get("references", [])}
        recs.update({t: _first(sc, t) for t in ("claim_record", "eob")})
        votes[key(recs)].append(lab)
    table = {k: _modal(v) for k, v in votes.items()}
    fallback = _modal(train.labels)
    return lambda view: _as_decision(table.get(key(view.get("records", {})), fallback), view)


def counter_label(counter: dict[str, Any], expected: dict[str, Any]) -> str:
    """The expected response to a counter-argument: the scenario's ``<prefix>_decision`` for
    the expected key ``<prefix>_id`` naming this counter, else ``reject`` (a counter the
    scenario does not say is right is to be rejected)."""
    for key, value in sorted(expected.items()):
        if key.endswith("_id") and value == counter["counter_id"]:
            decision = expected.get(key[:-3] + "_decision")
            if isinstance(decision, str):
                return decision
    return "reject"


def counter_rules(train: TrainSet) -> tuple[Decide, Callable[..., str]] | None:
    """The counter-text classifier: predicts the outcome from the wording of the
    counter-arguments (used to re-diagnose after filing) and each counter's right response
    from its own text."""
    docs, labs, cdocs, clabs = [], [], [], []
    for s, lab in zip(train.scenarios, train.labels, strict=True):
        counters = s.get("counters") or []
        if not counters:
            continue
        docs.append([w for c in counters for w in tokens(c["text"])])
        labs.append(lab)
        for c in counters:
            cdocs.append(tokens(c["text"]))
            clabs.append(counter_label(c, s["expected"]))
    if not docs:
        return None
    nb = NaiveBayes().fit(docs, labs)
    cnb = NaiveBayes().fit(cdocs, clabs) if len(set(clabs)) > 1 else None

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        counters = view.get("counters") or []
        return _as_decision(nb.predict([w for c in counters for w in tokens(c["text"])]), view)

    def respond(view: dict[str, Any], counter: dict[str, Any]) -> str:
        return cnb.predict(tokens(counter.get("text", ""))) if cnb else "reject"

    return decide, respond


# -- agents ----------------------------------------------------------------------------------
def heuristic_class(task: str) -> Any:
    return importlib.import_module(f"clarus_env.tasks.{task}.heuristic").HeuristicAgent


class RediagnoseAfterCounters:
    """Plays the heuristic, and once the counter-arguments arrive writes a new diagnosis
    predicted from their wording (the "read the feedback, re-answer" exploit). Graded on the
    first filing, the new diagnosis must not help — and a flip must cost the hold checks."""

    privileged = False

    def __init__(self, inner: Any, decide: Decide) -> None:
        self.inner, self.decide = inner, decide

    def reset(self, observation: Any, **kw: Any) -> None:
        self.inner.reset(observation, **kw)
        self.cited: list[str] = []
        self.pending: dict[str, Any] | None = None
        self.done_rediagnosis = False

    def act(self, observation: Any) -> dict[str, Any]:
        res = observation.last_action_result
        if isinstance(res, dict) and res.get("artifact_id"):
            self.cited.append(res["artifact_id"])
        if (isinstance(res, dict) and res.get("counter_arguments")
                and not self.done_rediagnosis):
            self.done_rediagnosis = True
            guess = self.decide({"counters": res["counter_arguments"]})
            self.pending = {"action_type": "write_diagnosis", "parameters": {
                "responsible_party": guess.get("responsible_party", "provider"),
                "finding": guess.get("finding", ""), "cited_artifacts": self.cited[:3],
                "summary": "revised after reading the counter-arguments"}}
            # the heuristic still sees this observation on its next turn
            self.held = observation
            return self.pending
        if self.pending is not None:
            self.pending = None
            return self.inner.act(self.held)
        return self.inner.act(observation)


def PartialReasoner(heuristic: Any, hidden: frozenset[str],  # noqa: N802 - a factory
                    table: dict[str, Any]) -> Any:
    """The heuristic with the task's key record hidden, doing the part of the task it still
    can (the filing: in adversarial_fabrication the bill against the estimate and the window),
    then answering the finding and party most common on train for that filing — the
    "half the reasoning plus a correlation" agent. Where the filing predicts the finding, it
    wins without the evidence the finding is about."""
    agent = heuristic(hide=hidden)
    inner = agent.own_decision

    def own_decision() -> dict[str, Any]:
        decision = dict(inner())
        label = table.get(decision.get("resolution_type"))
        if label is not None:
            decision.update((k, v) for k, v in label if k in ("finding", "responsible_party"))
        return decision

    agent.own_decision = own_decision
    return agent


class DoNothing:
    """Closes the case at once: the floor the ABC paper found passing 38% of a benchmark."""

    privileged = False

    def reset(self, observation: Any, **_: Any) -> None:
        pass

    def act(self, observation: Any) -> dict[str, Any]:
        return {"action_type": "close_case", "parameters": {}}


class RewardFarmer:
    """Collects every shaping reward on offer and never works the case: authenticate, read
    every record it can find a key for, check every deadline, write a diagnosis citing two
    records, calm the patient, write an audit entry, close. Files nothing."""

    privileged = False

    def __init__(self, task: str) -> None:
        self.task = task

    def reset(self, observation: Any, **_: Any) -> None:
        self.case_id = observation.case_id
        self.tried: set[tuple[str, str]] = set()
        self.ids: list[str] = []
        self.queue: list[dict[str, Any]] = [
            {"action_type": "authenticate_patient", "parameters": {"patient_id": self.case_id}},
            {"action_type": "fetch_payment_ledger", "parameters": {"patient_id": self.case_id}},
            {"action_type": "fetch_payment_processor_log",
             "parameters": {"patient_id": self.case_id}}]
        for cid in sorted(set(re.findall(r"\bCLM-\d+\b", observation.patient_complaint))):
            self._keys("claim_id", cid)
        self.tail = [
            *({"action_type": "check_deadline", "parameters": {"deadline_type": d}}
              for d in ("refund_request", "internal_appeal", "nsa_dispute", "gfe_delivery")),
            "diagnosis",
            {"action_type": "send_patient_communication",
             "parameters": {"message_type": "explanation", "message": "We are looking into it."}},
            {"action_type": "write_audit_entry", "parameters": {"summary": "records reviewed"}},
            {"action_type": "close_case", "parameters": {}}]

    def _keys(self, key: str, value: str) -> None:
        for action in FETCH_BY_KEY[key]:
            if (action, value) not in self.tried:
                self.tried.add((action, value))
                self.queue.append({"action_type": action, "parameters": {key: value}})

    def act(self, observation: Any) -> dict[str, Any]:
        res = observation.last_action_result
        if isinstance(res, dict) and isinstance(res.get("data"), dict):
            self.ids.append(res["artifact_id"])
            for key in ID_KEYS:
                value = res["data"].get(key)
                if isinstance(value, str):
                    self._keys(key, value)
        if self.queue:
            return self.queue.pop(0)
        while self.tail:
            nxt = self.tail.pop(0)
            if nxt == "diagnosis":
                findings = get_task(self.task).findings
                return {"action_type": "write_diagnosis", "parameters": {
                    "responsible_party": "provider", "finding": findings[0],
                    "cited_artifacts": self.ids[:2], "summary": "under review"}}
            return nxt
        return {"action_type": "close_case", "parameters": {}}


def shortcut_agents(task: str, train: TrainSet) -> dict[str, Callable[[], Any]]:
    """Name -> factory of every shortcut agent for ``task``, fitted on ``train``: agents
    whose answer comes from something other than the task's evidence."""
    H = heuristic_class(task)  # noqa: N806 - a class
    out: dict[str, Callable[[], Any]] = {}
    modal = modal_rule(train)
    out["modal"] = lambda: H(decide=modal)
    for name, rule in always_rules(train).items():
        out[name] = lambda rule=rule: H(decide=rule)
    complaint = complaint_rule(train)
    out["nb_complaint"] = lambda: H(decide=complaint)
    claim = claim_rule(train)
    out["claim_memorizer"] = lambda: H(decide=claim)
    lookup = lookup_rule(train)
    out["lookup_memorizer"] = lambda: H(decide=lookup)
    surface = records_rule(train)
    out["nb_records"] = lambda: H(decide=surface)
    forest = forest_rule(train)
    if forest is not None:
        out["rf_records"] = lambda: H(decide=forest)
    if hasattr(H, "own_decision") and ABLATIONS.get(task):
        hidden = frozenset(ABLATIONS[task][0])
        by_filing: dict[str, list[Any]] = defaultdict(list)
        for lab in train.labels:
            by_filing[dict(lab).get("resolution_type", "")].append(lab)
        table = {k: _modal(v) for k, v in by_filing.items()}
        out["partial_" + "+".join(sorted(hidden))] = lambda: PartialReasoner(H, hidden, table)
    counters = counter_rules(train)
    if counters is not None:
        rediagnose, respond = counters
        # files on the complaint's cue, then re-answers from the counter-arguments' wording
        out["counter_text"] = lambda: RediagnoseAfterCounters(
            H(decide=complaint, respond=respond), rediagnose)
    return out


def exploit_agents(task: str) -> dict[str, Callable[[], Any]]:
    """Agents that game the scoring rather than guess the answer: they must never pass."""
    H = heuristic_class(task)  # noqa: N806 - a class
    return {"do_nothing": DoNothing, "reward_farmer": lambda: RewardFarmer(task),
            # the heuristic's own reasoning, but citing every record it has seen
            "cite_everything": lambda: H(cite_all=True)}


def reference_agents(task: str) -> dict[str, Callable[[], Any]]:
    """Oracle, heuristic, random, and the heuristic with each kind of evidence hidden."""
    from .agents import make_agent

    H = heuristic_class(task)  # noqa: N806 - a class
    episodes = itertools.count()
    out: dict[str, Callable[[], Any]] = {
        "oracle": lambda: make_agent("oracle", task),
        "heuristic": lambda: H(),
        # a fresh random stream per episode (as `clarus eval` gives), deterministic per run
        "random": lambda: make_agent("random", task, seed=next(episodes)),
    }
    for hidden in ABLATIONS.get(task, ()):
        out["heuristic-no-" + "+".join(hidden)] = lambda hidden=hidden: H(
            hide=frozenset(hidden))
    out["heuristic-no-records"] = lambda: H(hide=EVIDENCE_TYPES)
    return out


# -- running and reporting -------------------------------------------------------------------
@dataclass
class AgentResult:
    agent: str
    kind: str  # reference | shortcut | exploit
    episodes: int = 0
    outcome: int = 0
    passed: int = 0
    score: float = 0.0
    ret: float = 0.0
    field_hits: Counter[str] = field(default_factory=Counter)

    def row(self, fields: list[str]) -> dict[str, Any]:
        n = self.episodes or 1
        return {"agent": self.agent, "kind": self.kind, "episodes": self.episodes,
                "outcome_accuracy": round(self.outcome / n, 4),
                "pass_rate": round(self.passed / n, 4),
                "mean_score": round(self.score / n, 4), "mean_return": round(self.ret / n, 4),
                "field_accuracy": {f: round(self.field_hits[f] / n, 4) for f in fields}}


def play(env: Any, agent: Any, seed: int) -> tuple[dict[str, Any], float]:
    obs = env.reset(seed=seed)
    if getattr(agent, "privileged", False):
        agent.reset(obs, seed=seed, scenario=env.scenario)
    else:
        agent.reset(obs)
    total, res = 0.0, None
    for _ in range(env.task.api_call_budget + 5):
        try:
            action = agent.act(obs)
        except Exception:  # a crashing shortcut is scored as it stands, like in `clarus eval`
            action = {"action_type": "close_case", "parameters": {}}
        res = env.step(action)
        total += res.reward
        obs = res.observation
        if res.done:
            break
    return (res.info.get("grade") if res else None) or {}, total


def audit_task(task: str, split: str, *, limit: int | None = None,
               train_limit: int | None = None, agents: Iterable[str] | None = None,
               progress: bool = False) -> dict[str, Any]:
    """Run every reference and shortcut agent on ``split`` and report per agent the outcome
    accuracy, pass rate, score, return and per-field accuracy, next to each field's modal
    share on the split."""
    if task == "medical_coding":  # code lists, not classes: its own shortcuts
        from .audit_coding import audit

        return audit(split, limit=limit, train_limit=train_limit, agent_names=agents)
    if task not in BILLING_TASKS:
        raise ValueError(f"clarus audit covers the billing tasks ({', '.join(BILLING_TASKS)}); "
                         f"got {task!r}")
    train = load_train(task, train_limit)
    groups = {"reference": reference_agents(task), "shortcut": shortcut_agents(task, train),
              "exploit": exploit_agents(task)}
    factories = {name: f for group in groups.values() for name, f in group.items()}
    kinds = {name: kind for kind, group in groups.items() for name in group}
    if agents is not None:
        wanted = list(agents)
        unknown = [a for a in wanted if a not in factories]
        if unknown:
            raise ValueError(f"unknown audit agent(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(factories)}")
        factories = {a: factories[a] for a in wanted}
    env = make(task, split=split)
    split_seeds = list(seeds(split, task))[:limit]
    expected = {s: dict(label_of(load_scenario(task, s)["expected"])) for s in split_seeds}
    fields = [f for f in OUTCOME_FIELDS if all(f in e for e in expected.values())]
    modal_share = {}
    for f in fields:
        counts = Counter(e[f] for e in expected.values())
        value, n = max(sorted(counts.items()), key=lambda kv: kv[1])
        modal_share[f] = {"value": value, "share": round(n / len(split_seeds), 4)}
    # the most common whole answer: what a constant answer (with the process done) passes at
    tuples = Counter(tuple(e[f] for f in fields) for e in expected.values())
    top, n_top = max(sorted(tuples.items()), key=lambda kv: kv[1])
    modal_outcome = {"value": dict(zip(fields, top, strict=True)),
                     "share": round(n_top / len(split_seeds), 4)}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(factories) * len(split_seeds), desc=f"audit {task}", unit="ep",
                   leave=False)
    rows = []
    for name, factory in factories.items():
        r = AgentResult(name, kinds[name])
        for seed in split_seeds:
            grade, ret = play(env, factory(), seed)
            r.episodes += 1
            r.outcome += outcome_correct({"grade": grade})
            r.passed += bool(grade) and grade["passed"] == grade["total"]
            r.score += grade.get("score", 0.0)
            r.ret += ret
            got = answered(env)
            for f in fields:
                r.field_hits[f] += got.get(f) == expected[seed][f]
            if bar is not None:
                bar.update()
        rows.append(r.row(fields))
    if bar is not None:
        bar.close()
    env.close()
    shortcuts = [r for r in rows if r["kind"] == "shortcut"]
    best = {
        "pass_rate": max((r["pass_rate"] for r in rows if r["kind"] != "reference"),
                         default=0.0),
        "outcome_accuracy": max((r["outcome_accuracy"] for r in shortcuts), default=0.0),
        "field_accuracy": {f: max((r["field_accuracy"][f] for r in shortcuts
                                   if f in judged_fields(r["agent"], [f])), default=0.0)
                           for f in fields},
    }
    return {"task": task, "split": split, "scenarios": len(split_seeds),
            "train_scenarios": len(train.scenarios), "fields": fields,
            "modal_share": modal_share, "modal_outcome": modal_outcome, "agents": rows,
            "best_shortcut": best}


def format_audit(report: dict[str, Any]) -> str:
    if report.get("kind") == "coding":
        from .audit_coding import format_report

        return format_report(report)
    fields = report["fields"]
    short = {"finding": "finding", "responsible_party": "party",
             "resolution_type": "resolution", "appeal_reason": "reason"}
    head = (f"{'agent':<34}{'outcome':>9}{'pass':>7}{'score':>7}{'return':>8}" +
            "".join(f"{short[f]:>12}" for f in fields))
    lines = [f"audit task={report['task']} split={report['split']} "
             f"scenarios={report['scenarios']} (shortcuts fitted on "
             f"{report['train_scenarios']} train scenarios)", head]
    lines.append(f"{'modal share on ' + report['split']:<34}{'':>9}{'':>7}{'':>7}{'':>8}" +
                 "".join(f"{report['modal_share'][f]['share']:>12.3f}" for f in fields))
    for kind in ("reference", "shortcut", "exploit"):
        for r in (r for r in report["agents"] if r["kind"] == kind):
            lines.append(f"{r['agent']:<34}{r['outcome_accuracy']:>9.3f}{r['pass_rate']:>7.3f}"
                         f"{r['mean_score']:>7.3f}{r['mean_return']:>8.3f}" +
                         "".join(f"{r['field_accuracy'][f]:>12.3f}" for f in fields))
    b = report["best_shortcut"]
    margin = ", ".join(
        f"{short[f]} {b['field_accuracy'][f]:.3f} vs modal {report['modal_share'][f]['share']:.3f}"
        for f in fields)
    lines.append(f"best shortcut: pass {b['pass_rate']:.3f} (exploits included), outcome "
                 f"{b['outcome_accuracy']:.3f}; {margin}")
    mo = report["modal_outcome"]
    lines.append(f"most common whole answer on {report['split']}: share {mo['share']:.3f} ("
                 + ", ".join(f"{short[f]}={v}" for f, v in mo["value"].items()) + ")")
    lines.append(verdict(report))
    return "\n".join(lines)


FIELD_SLACK = 0.10  # a shortcut may beat a field's modal share by at most this much
PASS_SLACK = 0.05  # and pass at most the most common whole answer's share plus this much


def judged_fields(agent: str, fields: list[str]) -> list[str]:
    """The outcome fields a shortcut is held to: all of them, except the filing a partial
    reasoner works out itself (it is the reasoning half of that agent, not a shortcut)."""
    return [f for f in fields if not (agent.startswith("partial_") and f == "resolution_type")]


def verdict(report: dict[str, Any]) -> str:
    """Whether the task holds the shortcut bar, and every shortcut that breaks it: a reader
    should not have to compare columns to see a leak."""
    short = {"finding": "finding", "responsible_party": "party",
             "resolution_type": "resolution", "appeal_reason": "reason"}
    breaks = []
    cap = report["modal_outcome"]["share"] + PASS_SLACK
    for r in report["agents"]:
        if r["kind"] == "reference":
            continue
        if r["pass_rate"] > cap:
            breaks.append(f"{r['agent']} pass {r['pass_rate']:.3f} > {cap:.3f}")
        if r["kind"] != "shortcut":
            continue
        for f in judged_fields(r["agent"], report["fields"]):
            bar = report["modal_share"][f]["share"] + FIELD_SLACK
            if r["field_accuracy"][f] > bar:
                breaks.append(f"{r['agent']} {short[f]} {r['field_accuracy'][f]:.3f} > "
                              f"{bar:.3f}")
    if not breaks:
        return (f"shortcut bar held: every field <= modal + {FIELD_SLACK:.2f}, "
                f"pass <= most common whole answer + {PASS_SLACK:.2f}")
    return "shortcut bar BROKEN: " + "; ".join(breaks)
