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

import bisect
import datetime as dt
import functools
import importlib
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .audit_counts import struct_counts
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
    # what the heuristic's process showed of each scenario at its decision (``train_views``)
    views: list[dict[str, Any]] | None = None
    # those views' leaves (``train_leaves``): every learned shortcut reads the same ones
    leaves: list[Leaves] | None = None
    # learned shortcuts fitted on this train set, by (learner, kinds): two agents over the
    # same leaves with the same learner (gb_records, router_gb's global trees) fit them once
    fitted: dict[tuple[str, tuple[str, ...]], Any] = field(default_factory=dict)

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


# -- boosted trees over what the agent was shown ---------------------------------------------
def train_views(train: TrainSet) -> list[dict[str, Any]]:
    """What the heuristic's process shows of each train scenario when it decides (the records
    it fetched and looked up, the complaint): the learned shortcuts below are fitted on exactly
    what they are later shown on the audited split, lookups included — a record built from the
    scenario file would differ from the fetched one wherever a lookup returns a reference."""
    if train.views is None:
        train.views = play_views(train.task, "train", train.scenarios)
    return train.views


def play_views(task: str, split: str, scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The view the heuristic's process shows at its decision, per scenario of ``split``: what
    a learned shortcut is fitted on (train) and what it answers from (``clarus audit
    --explain`` reads the audited split's through this too)."""
    import copy

    H = heuristic_class(task)  # noqa: N806 - a class
    env = make(task, split=split)
    views: list[dict[str, Any]] = []
    for sc in scenarios:
        seen: list[dict[str, Any]] = []
        play(env, H(decide=lambda view, seen=seen: seen.append(copy.deepcopy(view))),
             sc["seed"])
        views.append(seen[-1] if seen else {"complaint": "", "records": {}})
    env.close()
    return views


DATE_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2}))?")
# a timestamp's printed offset from UTC, at its end: Z, +10:00, -0500
UTC_OFFSET = re.compile(r"\d(?:Z|([+-])(\d{2}):?(\d{2}))$")
TEXT_TOKEN = re.compile(r"[a-z][a-z'-]*|\d+(?:[:.,/]\d+)*")
MAX_CATEGORIES = 32  # a categorical leaf with more values on train is an id or a name
MIN_SHARE = 0.01  # a leaf seen in fewer train views cannot be learned from
MAX_TEXT_GROUP = 8  # texts per container compared pairwise


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    """The ``n``-th ``weekday`` (Monday 0) of a month; ``n = -1`` is the last one."""
    if n < 0:
        last = dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
        return last - dt.timedelta(days=(last.weekday() - weekday) % 7)
    first = dt.date(year, month, 1)
    return first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))


@functools.cache
def federal_holidays(year: int) -> tuple[dt.date, ...]:
    """The legal public holidays of 5 U.S.C. 6103(a) for ``year``, on the days they are
    observed (6103(b) and Executive Order 11582: one falling on a Saturday is observed the
    Friday before, on a Sunday the Monday after; New Year's Day on a Saturday is therefore
    observed on December 31 of the year before). The audit's own calendar, independent of any
    generator's: a shortcut reads dates as an outsider would. Juneteenth from 2021."""
    fixed = [dt.date(year, 1, 1), dt.date(year, 7, 4), dt.date(year, 11, 11),
             dt.date(year, 12, 25)] + ([dt.date(year, 6, 19)] if year >= 2021 else [])
    observed = [d - dt.timedelta(days=1) if d.weekday() == 5 else
                d + dt.timedelta(days=1) if d.weekday() == 6 else d for d in fixed]
    moving = [_nth_weekday(year, 1, 0, 3), _nth_weekday(year, 2, 0, 3),  # King, Washington
              _nth_weekday(year, 5, 0, -1), _nth_weekday(year, 9, 0, 1),  # Memorial, Labor
              _nth_weekday(year, 10, 0, 2), _nth_weekday(year, 11, 3, 4)]  # Columbus, Thanksg.
    return tuple(sorted(observed + moving))


@functools.lru_cache(maxsize=4096)
def holiday_distance(day: dt.date) -> tuple[int, int]:
    """Days since the last observed federal holiday and until the next one (0 and 0 on the
    holiday itself): deadlines counted in business days bend around holidays, so a generator
    that draws its dates near them more often in one branch leaks through this alone."""
    around = sorted({h for y in (day.year - 1, day.year, day.year + 1)
                     for h in federal_holidays(y)})
    i = bisect.bisect_right(around, day)
    since = (day - around[i - 1]).days
    j = bisect.bisect_left(around, day)
    return since, (around[j] - day).days


@dataclass
class Leaves:
    """A view's leaves by kind: numbers (amounts as printed, list lengths), date parts (day
    number, weekday, hour of every ISO date or timestamp), each date's distance to the
    nearest federal holidays, categorical strings, and free texts (three or more tokens with
    a space between) for the pairwise overlap and the word presence."""

    numbers: dict[str, float] = field(default_factory=dict)
    dates: dict[str, float] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    holidays: dict[str, float] = field(default_factory=dict)
    # per record, how often each word occurs across all its strings (``record_word_counts``)
    counts: dict[str, float] = field(default_factory=dict)
    # the same counts split by the year of the item each string sits in (``record_year_counts``)
    year_counts: dict[str, float] = field(default_factory=dict)
    # each timestamp's hour in UTC, where the timestamp prints its offset (``Z``, ``+10:00``)
    utc_hours: dict[str, float] = field(default_factory=dict)
    # list lengths and per-value item counts, also on/before/after the view's anchor day
    # (``audit_counts.struct_counts``)
    structs: dict[str, float] = field(default_factory=dict)


def _walk(obj: Any, path: str, out: Leaves) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _walk(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(obj, list):
        out.numbers[f"{path}#n"] = float(len(obj))
        for i, v in enumerate(obj[:MAX_TEXT_GROUP]):
            _walk(v, f"{path}[{i}]", out)
    elif isinstance(obj, bool):
        out.labels[path] = str(obj)
    elif isinstance(obj, (int, float)):
        out.numbers[path] = float(obj)
    elif isinstance(obj, str):
        text = obj.strip()
        if MONEYISH.match(text):
            out.numbers[path] = float(text.replace("$", "").replace(",", ""))
            if text.isdigit():  # a printed code (an indicator, a place of service) is a label too
                out.labels[path] = text
            return
        m = DATE_TIME.match(text)
        if m:
            try:
                day = dt.date.fromisoformat(m.group(1))
            except ValueError:
                day = None
            if day is not None:
                out.dates[f"{path}@day"] = float(day.toordinal())
                out.dates[f"{path}@weekday"] = float(day.weekday())
                since, until = holiday_distance(day)
                out.holidays[f"{path}@since_holiday"] = float(since)
                out.holidays[f"{path}@until_holiday"] = float(until)
                out.holidays[f"{path}@holiday"] = float(min(since, until))
                if m.group(2):
                    hour = int(m.group(2)) + int(m.group(3)) / 60
                    out.dates[f"{path}@hour"] = hour
                    offset = UTC_OFFSET.search(text)
                    if offset:
                        out.utc_hours[path] = (hour - _offset_hours(offset)) % 24
                return
        if len(text) <= 40:
            out.labels[path] = text
        if " " in text and len(TEXT_TOKEN.findall(text.lower())) >= 3:
            out.texts[path] = text  # words, not an id such as CLR-183464-SWFM


def _offset_hours(m: re.Match[str]) -> float:
    """A printed UTC offset (``UTC_OFFSET``'s match) in hours; Z is 0."""
    if not m.group(1):
        return 0.0
    hours = int(m.group(2)) + int(m.group(3)) / 60
    return hours if m.group(1) == "+" else -hours


def _count_words(obj: Any, counts: Counter[str]) -> None:
    if isinstance(obj, dict):
        for v in obj.values():
            _count_words(v, counts)
    elif isinstance(obj, list):
        for v in obj:  # every item: a count is the point, so no list is cut short
            _count_words(v, counts)
    elif isinstance(obj, str):
        text = obj.strip()
        if not MONEYISH.match(text) and not DATE_TIME.match(text):
            counts.update(WORD_ONLY.findall(text.lower()))


def record_word_counts(record: Any) -> Counter[str]:
    """How often each word (digits dropped) occurs across every string of a record — free
    texts, list items' descriptions, types and statuses alike. Presence (``rf_words``) cannot
    see a branch that shows up as *one more* line of the same kind: a second "Copay at
    check-in" capture, a missing "Copay collected" credit (red team round 5 read
    duplicate_charge at AUC 0.96 from that one count)."""
    counts: Counter[str] = Counter()
    _count_words(record, counts)
    return counts


YEAR_BUCKETS = ("this_year", "last_year", "older", "undated")


def _own_date(obj: dict[str, Any]) -> dt.date | None:
    """The first date printed among an object's own values (not in nested ones)."""
    for v in obj.values():
        if isinstance(v, str):
            m = DATE_TIME.match(v.strip())
            if m:
                try:
                    return dt.date.fromisoformat(m.group(1))
                except ValueError:
                    continue
    return None


def _count_words_by_year(obj: Any, bucket: str, current: int, counts: Counter[str]) -> None:
    if isinstance(obj, dict):
        own = _own_date(obj)
        if own is not None:
            gap = current - own.year
            bucket = YEAR_BUCKETS[0 if gap <= 0 else 1 if gap == 1 else 2]
        for v in obj.values():
            _count_words_by_year(v, bucket, current, counts)
    elif isinstance(obj, list):
        for v in obj:
            _count_words_by_year(v, bucket, current, counts)
    elif isinstance(obj, str):
        text = obj.strip()
        if not MONEYISH.match(text) and not DATE_TIME.match(text):
            counts.update(f"{bucket}~{w}" for w in WORD_ONLY.findall(text.lower()))


def record_year_counts(record: Any, current: int) -> Counter[str]:
    """``record_word_counts`` split by the year of the item each string sits in, relative to
    ``current`` (the view's own year: the one most of its dates print — not the latest, as a
    deadline's due date often falls in the next year): the words of an object (a list item,
    the record itself) go to the bucket of the first date among its own values —
    ``this_year`` (or later), ``last_year``, ``older`` — and, where it prints none, to that
    of the nearest enclosing object that does, else to ``undated``. Totals cannot tell "two copay
    captures this year" from "one this year, one last year"; red team round 6 passed
    deductive 0.328 (cap 0.25) on that count."""
    counts: Counter[str] = Counter()
    _count_words_by_year(record, YEAR_BUCKETS[3], current, counts)
    return counts


def view_leaves(view: dict[str, Any]) -> Leaves:
    """Every leaf of every record in a view (the complaint is the NB shortcut's), by kind."""
    out = Leaves()
    records = view.get("records") or {}
    for t in sorted(records):
        if records[t]:
            _walk(records[t], t, out)
            out.counts.update((f"{t}~{w}", float(c))
                              for w, c in record_word_counts(records[t]).items())
    years = Counter(dt.date.fromordinal(int(v)).year for k, v in out.dates.items()
                    if k.endswith("@day"))
    # the view's own year: the one most of its dates print (ties: the later)
    current = max(years.items(), key=lambda kv: (kv[1], kv[0]))[0] if years else 0
    for t in sorted(records):
        if records[t]:
            out.year_counts.update((f"{t}~{w}", float(c))
                                   for w, c in record_year_counts(records[t], current).items())
    out.structs.update((k, float(c)) for k, c in struct_counts(records).items())
    return out


LAST_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def text_groups(texts: dict[str, str]) -> dict[str, dict[str, str]]:
    """Free texts that sit side by side, whatever the record: the items of one list
    (``notes[0]``, ``notes[1]``), the text fields of one object, and the same field across
    the items of a list (``lines[0].description``, ``lines[1].description``). Nothing
    names a record or a field: the groups follow the data's shape."""
    groups: dict[str, dict[str, str]] = defaultdict(dict)
    for path, text in texts.items():
        m = LAST_INDEX.match(path)
        if m:
            groups[m.group(1)][m.group(2)] = text
            continue
        parent, _, member = path.rpartition(".")
        groups[parent][member] = text
        if "[" in parent:  # the same field across a list's items
            starred = re.sub(r"\[\d+\]", "[*]", path)
            groups[starred][",".join(re.findall(r"\[(\d+)\]", path))] = text
    return {g: m for g, m in groups.items() if len(m) >= 2}


def overlap_features(texts: dict[str, str], free: Iterable[str] | None = None
                     ) -> dict[str, float]:
    """Surface agreement between every pair of side-by-side texts (only the ``free`` paths,
    when given): shared tokens, shared number tokens (a clock time, a distance, a date stay
    one token), and the Jaccard index of their tokens and of their numbers. It compares
    strings, not what they mean: a task whose answer is "the two notes repeat a number" is
    won by this agent without reading."""
    if free is not None:
        keep = set(free)
        texts = {p: t for p, t in texts.items() if p in keep}
    out: dict[str, float] = {}
    for group, members in text_groups(texts).items():
        names = sorted(members, key=lambda s: (len(s), s))[:MAX_TEXT_GROUP]
        toks = {n: set(TEXT_TOKEN.findall(members[n].lower())) for n in names}
        for a, b in itertools.combinations(names, 2):
            ta, tb = toks[a], toks[b]
            na = {t for t in ta if t[0].isdigit()}
            nb = {t for t in tb if t[0].isdigit()}
            key = f"{group}|{a}~{b}"
            out[f"{key}|shared"] = float(len(ta & tb))
            out[f"{key}|shared_numbers"] = float(len(na & nb))
            out[f"{key}|jaccard"] = len(ta & tb) / max(1, len(ta | tb))
            out[f"{key}|jaccard_numbers"] = len(na & nb) / max(1, len(na | nb))
    return out


WORD_ONLY = re.compile(r"[a-z]+(?:['-][a-z]+)*")
WORD_MIN_DOCS = 5  # a word in fewer train views is not in the vocabulary
DIGIT_RUN = re.compile(r"\d+")
NOTE_NUMBERS = 8  # digit runs read per free text, by position
MAX_FAMILY_COLUMNS = 400  # word-count / note-number columns kept, by train variance
# column families that are counts (0 where absent, in the vocabulary from ``WORD_MIN_DOCS``
# train views): word presence, word counts, year-split word counts, structural counts
COUNTED = ("w:", "k:", "y:", "s:")


def words(text: str) -> set[str]:
    """The distinct words of a free text, lower-cased, digits dropped: what a note says in
    words (a side, a format, a credential) rather than the numbers it repeats, which the
    overlap features compare."""
    return set(WORD_ONLY.findall(text.lower()))


class LeafMatrix:
    """Turns views into a numeric matrix a boosted tree fits, with the columns fixed on train:
    numeric and date leaves as values (missing stays missing), categorical leaves as category
    codes (two to ``MAX_CATEGORIES`` values on train; unseen values are missing), overlap
    figures as values. Columns seen in under 1% of train views or constant on train are
    dropped."""

    def __init__(self, kinds: tuple[str, ...], leaves: list[Leaves], *,
                 onehot: bool = False) -> None:
        self.kinds, self.onehot = kinds, onehot
        n = len(leaves)
        # free text is text that is not a category: a path with more distinct texts on train
        # than a categorical leaf may have (boilerplate such as an adjustment's standard
        # description is left to the categorical leaves)
        seen: dict[str, set[str]] = defaultdict(set)
        for lv in leaves:
            for p, t in lv.texts.items():
                seen[p].add(t)
        self.free = sorted(p for p, ts in seen.items() if len(ts) > MAX_CATEGORIES)
        self.worded = self._worded(seen)
        rows = [self._raw(lv) for lv in leaves]
        values: dict[str, list[Any]] = defaultdict(list)
        for row in rows:
            for k, v in row.items():
                values[k].append(v)
        self.columns: list[str] = []
        self.codes: dict[str, dict[str, int]] = {}
        capped = self._capped(values, n)
        for k in sorted(values):
            vs = values[k]
            distinct = set(vs)
            if (len(vs) < (WORD_MIN_DOCS if k.startswith(COUNTED) else MIN_SHARE * n)
                    or (len(distinct) < 2 and len(vs) == n) or k in capped):
                continue
            if isinstance(vs[0], str):
                if len(distinct) > MAX_CATEGORIES:
                    continue
                self.codes[k] = {v: i for i, v in enumerate(sorted(distinct))}
                if onehot:
                    self.columns.extend(f"{k}={v}" for v in sorted(distinct))
                    continue
            self.columns.append(k)
        self.index = {k: i for i, k in enumerate(self.columns)}
        self.categorical = [k in self.codes for k in self.columns]
        # presence columns (a word, a one-hot category) and word counts read 0 where absent,
        # not missing
        self.present = [i for i, k in enumerate(self.columns)
                        if k.startswith(COUNTED) or (onehot and k.startswith("c:"))]

    @staticmethod
    def _capped(values: dict[str, list[Any]], n: int) -> set[str]:
        """The word-count and note-number columns left out to bound the fit's cost: per
        family, all but the ``MAX_FAMILY_COLUMNS`` word counts with the highest train variance
        (a count absent from a view is 0 there) and note numbers printed in the most train
        views. Other families are never capped."""
        out: set[str] = set()
        for prefix in ("k:", "y:", "s:", "t:"):
            spread = []
            for k, vs in values.items():
                if not k.startswith(prefix):
                    continue
                if prefix != "t:" and len(vs) < WORD_MIN_DOCS:
                    # a count in too few views is no column anyway; ranked with them, one-off
                    # ids repeated within one view (a card's last four digits on thirty
                    # transactions: variance 0.75) took 329 of deductive's 400 structural
                    # places from the low-variance counts (one EOB line more) the cap should
                    # keep — and a rare word repeated in one note did the same to the word
                    # counts, overall and by year (round 9)
                    continue
                if prefix == "t:":  # a number's scale says nothing: the most printed first
                    spread.append((-float(len(vs)), k))
                    continue
                mean = sum(vs) / n
                spread.append((-(sum(v * v for v in vs) / n - mean * mean), k))
            out.update(k for _, k in sorted(spread)[MAX_FAMILY_COLUMNS:])
        return out

    def _worded(self, seen: dict[str, set[str]]) -> list[str]:
        """The texts whose words are features: the free texts (the words of boilerplate
        measured no better and cost a third more columns)."""
        return self.free

    def _raw(self, lv: Leaves) -> dict[str, Any]:
        row: dict[str, Any] = {}
        if "numbers" in self.kinds:
            row.update((f"n:{k}", v) for k, v in lv.numbers.items())
        if "dates" in self.kinds:
            row.update((f"d:{k}", v) for k, v in lv.dates.items())
        if "labels" in self.kinds:
            row.update((f"c:{k}", v) for k, v in lv.labels.items())
        if "overlap" in self.kinds:
            row.update((f"o:{k}", v) for k, v in overlap_features(lv.texts, self.free).items())
        if "holidays" in self.kinds:
            row.update((f"h:{k}", v) for k, v in lv.holidays.items())
        if "words" in self.kinds:
            for p in self.worded:
                if p in lv.texts:
                    row.update((f"w:{p}~{w}", 1.0) for w in words(lv.texts[p]))
        if "wordcounts" in self.kinds:
            row.update((f"k:{k}", v) for k, v in lv.counts.items())
        if "yearcounts" in self.kinds:
            row.update((f"y:{k}", v) for k, v in lv.year_counts.items())
        if "structcounts" in self.kinds:
            row.update((f"s:{k}", v) for k, v in lv.structs.items())
        if "notenumbers" in self.kinds:
            for p in self.free:
                if p in lv.texts:
                    row.update((f"t:{p}#{j}", float(run)) for j, run in
                               enumerate(DIGIT_RUN.findall(lv.texts[p])[:NOTE_NUMBERS]))
        return row

    def transform(self, leaves: list[Leaves]) -> Any:
        import numpy as np

        x = np.full((len(leaves), len(self.columns)), np.nan)
        x[:, self.present] = 0.0
        for r, lv in enumerate(leaves):
            for k, v in self._raw(lv).items():
                if self.onehot and k in self.codes:
                    c = self.index.get(f"{k}={v}")
                    if c is not None:
                        x[r, c] = 1.0
                    continue
                c = self.index.get(k)
                if c is None:
                    continue
                if k in self.codes:
                    code = self.codes[k].get(v)
                    if code is not None:
                        x[r, c] = code
                else:
                    x[r, c] = v
        return x


@functools.cache
def _one_thread() -> Any:
    """A controller for the OpenMP pool scikit-learn's boosted trees use, found once (finding
    the loaded libraries costs milliseconds; a single-row prediction on a busy pool, tens)."""
    import sklearn.ensemble  # noqa: F401 - loads the OpenMP runtime the controller must see
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


MIN_LEAF = 10  # the boosted trees' min_samples_leaf


def _fillable(x: Any) -> Any:
    """``x`` with every column holding fewer than ``MIN_LEAF`` values set to 0: scikit-learn's
    binning fails on a column with nothing but missing values in the rows it fits on (a small
    ``--train-limit`` leaves some leaves printed once or never, and early stopping holds 15%
    of the rows out). A split needs ``MIN_LEAF`` rows on each side, and missing values go to
    one side whole, so no tree can split such a column: the fitted model is the same."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    empty = (~np.isnan(x)).sum(axis=0) < MIN_LEAF
    if not empty.any():
        return x
    x = x.copy()
    x[:, empty] = 0.0
    return x


def boosted_trees(x: Any, y: list[str], categorical: list[bool]) -> Any:
    """One gradient-boosted classifier, the same in every process: a fixed random state for
    the early-stopping split, and one thread (the audit shares CI's cores, and spinning
    OpenMP workers on a loaded machine are slower than one)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    counts = Counter(y)
    # early stopping holds out a stratified 15%, which needs every class twice and a row per
    # class in the hold-out (a small --train-limit with many whole answers has neither)
    early = min(counts.values()) >= 2 and math.ceil(0.15 * len(y)) >= len(counts)
    model = HistGradientBoostingClassifier(
        learning_rate=0.1, max_iter=200, max_leaf_nodes=15, min_samples_leaf=MIN_LEAF,
        early_stopping=early, validation_fraction=0.15, n_iter_no_change=10,
        categorical_features=categorical if any(categorical) else None, random_state=0)
    with _one_thread().limit(limits=1, user_api="openmp"):
        return model.fit(_fillable(x), y)


def boosted_trees_full(x: Any, y: list[str], categorical: list[bool]) -> Any:
    """``boosted_trees`` without early stopping: all 200 rounds. A note's clock minutes are
    memorized value by value, which a 15% hold-out stops long before (note_numbers read
    abductive at 0.55-0.56 with it, 0.71-0.77 without)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        learning_rate=0.1, max_iter=200, max_leaf_nodes=15, min_samples_leaf=MIN_LEAF,
        early_stopping=False,
        categorical_features=categorical if any(categorical) else None, random_state=0)
    with _one_thread().limit(limits=1, user_api="openmp"):
        return model.fit(_fillable(x), y)


def _log_proba(model: Any, x: Any) -> dict[str, float]:
    """The model's log-probability of each class for one row."""
    with _one_thread().limit(limits=1, user_api="openmp"):
        proba = model.predict_proba(x)[0]
    return {str(c): math.log(max(p, 1e-12)) for c, p in zip(model.classes_, proba, strict=True)}


# the learned shortcuts over leaves, one agent per feature set, each fitted on all of train:
# each kind alone (a kind alone can hold a leak that the other kinds' noise hides at 1,200
# scenarios, and choosing the kind on a slice of train is too noisy to find it; the dates
# with each date's distance to the federal holidays), numbers, dates and labels together,
# the categorical leaves with the pairwise overlap of side-by-side free texts, and a random
# forest over the categorical leaves and the words of every free text (rf_words)
LEARNED_AGENTS: dict[str, tuple[str, ...]] = {
    "gb_numbers": ("numbers",), "gb_dates": ("dates", "holidays"), "gb_labels": ("labels",),
    "gb_records": ("numbers", "dates", "labels"), "overlap_records": ("labels", "overlap"),
    "rf_words": ("labels", "words"),
    # round 6 (red team round 5): per-record word counts, alone and with the numeric leaves
    # (a branch seen as one line more or less of a kind, next to the amounts it moves), and
    # every free text's digit runs by position with the categorical leaves (a note's clock
    # minutes and durations, memorized rather than compared; the numeric leaves' noise cost
    # it 0.15 on abductive)
    "gb_wordcounts": ("wordcounts",), "gb_wordcounts_numbers": ("numbers", "wordcounts"),
    "note_numbers": ("labels", "notenumbers"),
    # round 7 (red team round 6): the word counts split by the year of the item they sit in
    # (this year's copay captures, not all of them), with the numeric leaves; and gb_records'
    # leaves through one set of trees per family of views (``audit_learned.router_rule``)
    "gb_wordcounts_years": ("numbers", "yearcounts"),
    "router_gb": ("numbers", "dates", "labels"),
    # round 8 (independent red team): structural counts - list lengths, items per value of
    # each short categorical field, and those on/before/after the view's anchor day
    # (``audit_counts.struct_counts``), alone and with the numeric leaves (the amounts the
    # counted lines move: deductive finding 0.51-0.54 where the counts alone read 0.37-0.39)
    "gb_counts": ("structcounts",), "gb_counts_numbers": ("numbers", "structcounts")}
# the learner each of them uses where it is not boosted trees
LEARNER: dict[str, str] = {"rf_words": "forest", "note_numbers": "boosted_full",
                           "router_gb": "router"}


def _pointer(train: TrainSet, views: list[dict[str, Any]], leaves: list[Leaves]
             ) -> Callable[..., int | None]:
    """The amount a learned shortcut files: per answer (finding and filing, else finding) the
    one source that held the expected amount most often on train — $0, the complaint's first
    dollar figure, or one numeric leaf copied as printed. A copy is not arithmetic; an amount
    that sits printed in one field in one branch is a leak."""
    hits: dict[Any, Counter[str]] = defaultdict(Counter)
    for sc, lab, view, lv in zip(train.scenarios, train.labels, views, leaves, strict=True):
        cents = sc["expected"].get("amount_cents")
        if not isinstance(cents, int):
            continue
        d = dict(lab)
        sources = {"$0"} if cents == 0 else set()
        if amount_cue(view) == cents:
            sources.add("complaint")
        sources.update(k for k, v in lv.numbers.items()
                       if not k.endswith("#n") and round(v * 100) == cents)
        for key in ((d.get("finding"), d.get("resolution_type")), (d.get("finding"),)):
            hits[key].update(sources or {"(none)"})
    best = {k: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for k, c in hits.items() if c}

    def amount(label: dict[str, str], view: dict[str, Any], leaves: Leaves) -> int | None:
        src = best.get((label.get("finding"), label.get("resolution_type")),
                       best.get((label.get("finding"),), "complaint"))
        if src == "$0":
            return 0
        if src == "complaint" or src == "(none)" or src not in leaves.numbers:
            return amount_cue(view)
        return round(leaves.numbers[src] * 100)

    return amount


def forest(x: Any, y: list[str]) -> Any:
    """One random forest, the same in every process (fixed random state, one job): on many
    sparse presence columns (the words of the notes) a forest's random feature subsets find
    a word among hundreds that boosting's greedy first splits pass over."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=100, min_samples_leaf=1, max_features="sqrt",
                                  random_state=0, n_jobs=1).fit(x, y)


def _train_leaves(train: TrainSet) -> tuple[list[dict[str, Any]], list[Leaves]]:
    views = train_views(train)
    if train.leaves is None:
        train.leaves = [view_leaves(v) for v in views]
    return views, train.leaves


def learned_rule(train: TrainSet, kinds: tuple[str, ...], model: str = "boosted"
                 ) -> Decide | None:
    """Boosted trees (``model="forest"``: a random forest over one-hot categories and word
    presence; ``"router"``: one set of trees per family of views, ``router_rule``) per outcome
    field over the ``kinds`` of leaves the agent was shown
    (``LEARNED_AGENTS``), fitted on train. None without scikit-learn, or where train shows no
    leaf of these kinds (for the overlap: no view holds two free texts side by side; for the
    words: no free text)."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return None
    if model == "router":
        from .audit_learned import router_rule  # a module of its own; it builds on this one

        return router_rule(train, kinds)
    if (model, kinds) in train.fitted:
        return train.fitted[(model, kinds)]
    parts = learned_parts(train, kinds, model)
    if parts is None:
        return None
    views, leaves = _train_leaves(train)
    train.fitted[(model, kinds)] = _decoder(train, views, leaves, *parts)
    return train.fitted[(model, kinds)]


def learned_parts(train: TrainSet, kinds: tuple[str, ...], model: str = "boosted"
                  ) -> tuple[LeafMatrix, Callable[[Any, list[str]], Any]] | None:
    """A learned shortcut's columns (fixed on train) and the learner it fits per field (for
    ``model`` "boosted", "boosted_full" or "forest"): what ``learned_rule`` fits, and what
    ``clarus audit --explain`` refits to rank the columns. None where train shows no leaf of
    these kinds."""
    _, leaves = _train_leaves(train)
    matrix = LeafMatrix(kinds, leaves, onehot=model == "forest")
    if not matrix.columns or any(k in kinds and not any(c.startswith(p) for c in matrix.columns)
                                 for k, p in (("overlap", "o:"), ("words", "w:"),
                                              ("wordcounts", "k:"), ("yearcounts", "y:"),
                                              ("structcounts", "s:"),
                                              ("notenumbers", "t:"))):
        return None
    fit = forest if model == "forest" else functools.partial(
        boosted_trees_full if model == "boosted_full" else boosted_trees,
        categorical=matrix.categorical)
    return matrix, fit


@dataclass
class FieldModels:
    """A learned shortcut's models, one per outcome field (``fit_fields``), and how their
    probabilities become one answer (``decode``)."""

    fields: list[str]
    models: dict[str, Any]
    constant: dict[str, str]
    answers: list[tuple[str, ...]]

    def decode(self, logp: dict[str, dict[str, float]]) -> dict[str, str]:
        """The finding is its model's most likely value; the rest is the whole answer seen on
        train with that finding that the other fields' models find most likely together
        (per-field argmaxes can pair a finding with another finding's filing; decoding the
        finding jointly too would trade its own accuracy for consistency)."""
        fields = self.fields
        first = fields[0]
        pick = (max(sorted(logp[first]), key=lambda v: logp[first][v]) if first in logp
                else self.constant[first])
        best = max((a for a in self.answers if a[0] == pick), key=lambda a: sum(
            logp[f].get(v, -math.inf) if f in logp else 0.0
            for f, v in zip(fields[1:], a[1:], strict=True)))
        return dict(zip(fields, best, strict=True))


def fit_fields(labels: list[tuple[tuple[str, str], ...]], x: Any,
               fit: Callable[[Any, list[str]], Any]) -> FieldModels:
    """One model per outcome field (``fit``) over ``x``, the rows of ``labels``; a field with
    one value on train answers it, and a field the finding decides on train is left to the
    decoding."""
    fields = [f for f, _ in labels[0]]
    models: dict[str, Any] = {}
    constant: dict[str, str] = {}
    answers = sorted({tuple(dict(lab)[f] for f in fields) for lab in labels})
    for i, f in enumerate(fields):
        y = [dict(lab)[f] for lab in labels]
        if len(set(y)) < 2:
            constant[f] = y[0]
        elif i and len({a[0] for a in answers}) == len({(a[0], a[i]) for a in answers}):
            continue  # the finding decides this field on train: the decoding below sets it
        else:
            models[f] = fit(x, y)
    return FieldModels(fields, models, constant, answers)


def _decoder(train: TrainSet, views: list[dict[str, Any]], leaves: list[Leaves], matrix: Any,
             fit: Callable[[Any, list[str]], Any]) -> Decide:
    """A learned shortcut's answer: one model per outcome field (``fit_fields``) over
    ``matrix``, decoded into one answer (``FieldModels.decode``). The amount comes from
    ``_pointer``."""
    fitted = fit_fields(train.labels, matrix.transform(leaves), fit)
    amount = _pointer(train, views, leaves)

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        lv = view_leaves(view)
        row = matrix.transform([lv])
        label = fitted.decode({f: _log_proba(m, row) for f, m in fitted.models.items()})
        return {**label, "amount_cents": amount(label, view, lv)}

    return decide


# the whole-answer shortcut's leaves: the strongest families of red team round 5 together
PASS_KINDS = ("numbers", "labels", "wordcounts", "notenumbers")


def pass_rule(train: TrainSet) -> Decide | None:
    """The pass maximiser: boosted trees over whole answers (every outcome field at once) on
    the strongest leaf families (``PASS_KINDS``), each answer filed with the amount its train
    pointer copies (``_pointer``); it answers argmax P(answer) x P(the pointer is right for
    that answer on train). The per-field shortcuts maximise field accuracy; a benchmark's pass
    rate is won by answering only what can also be paid to the cent, so it is measured by an
    agent that aims at it (red team round 5 passed deductive 0.344 against a bar of 0.25 this
    way, while every per-field shortcut passed at most 0.20). None without scikit-learn."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return None
    views, leaves = _train_leaves(train)
    matrix = LeafMatrix(PASS_KINDS, leaves)
    if not matrix.columns:
        return None
    fields = [f for f, _ in train.labels[0]]
    keys = [repr(tuple(dict(lab)[f] for f in fields)) for lab in train.labels]
    answer = {repr(t): dict(zip(fields, t, strict=True))
              for t in {tuple(dict(lab)[f] for f in fields) for lab in train.labels}}
    amount = _pointer(train, views, leaves)
    seen: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for sc, key, view, lv in zip(train.scenarios, keys, views, leaves, strict=True):
        seen[key] += 1
        right[key] += amount(answer[key], view, lv) == sc["expected"].get("amount_cents")
    # log P(the pointer is right | answer) on train; an answer never paid right is never chosen
    log_hit = {k: math.log(max(right[k] / seen[k], 1e-12)) for k in seen}
    model = (boosted_trees(matrix.transform(leaves), keys, matrix.categorical)
             if len(seen) > 1 else None)

    def decide(view: dict[str, Any]) -> dict[str, Any]:
        lv = view_leaves(view)
        logp = (_log_proba(model, matrix.transform([lv])) if model is not None
                else {keys[0]: 0.0})
        best = max(sorted(logp), key=lambda k: logp[k] + log_hit[k])
        return {**answer[best], "amount_cents": amount(answer[best], view, lv)}

    return decide


PAIR_LEAVES = 20  # the numeric leaves the relation learner combines pairwise
PAIR_PRESENT = 0.5  # ... among those printed in at least this share of train views


class PairMatrix:
    """The ``PAIR_LEAVES`` numeric leaves (printed in most train views) that a random forest
    fitted on train to the finding ranks highest, every pairwise difference and every ratio:
    the columns a learner needs to find "this amount exceeds that one" or "this is 20% of that"
    without knowing which amounts mean what."""

    categorical: list[bool]

    def __init__(self, leaves: list[Leaves], findings: list[str]) -> None:
        import numpy as np

        n = len(leaves)
        count = Counter(k for lv in leaves for k in lv.numbers)
        names = sorted(k for k, c in count.items() if c >= PAIR_PRESENT * n)
        self.names: list[str] = []
        if names:
            x = self._raw(leaves, names)
            keep = [j for j in range(len(names)) if np.nanstd(x[:, j]) > 0]
            if keep:
                rf = forest(np.nan_to_num(x[:, keep], nan=-1.0), findings)
                order = sorted(range(len(keep)),
                               key=lambda j: (-rf.feature_importances_[j], names[keep[j]]))
                self.names = [names[keep[j]] for j in order[:PAIR_LEAVES]]
        k = len(self.names)
        self.columns = [*self.names, *(f"{self.names[i]} {op} {self.names[j]}"
                                       for i, j in itertools.combinations(range(k), 2)
                                       for op in ("-", "/"))]
        self.categorical = [False] * len(self.columns)

    @staticmethod
    def _raw(leaves: list[Leaves], names: list[str]) -> Any:
        import numpy as np

        return np.array([[lv.numbers.get(k, np.nan) for k in names] for lv in leaves])

    def transform(self, leaves: list[Leaves]) -> Any:
        import numpy as np

        x = self._raw(leaves, self.names)
        out = [x]
        for i, j in itertools.combinations(range(len(self.names)), 2):
            out.append(x[:, i:i + 1] - x[:, j:j + 1])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = x[:, i:i + 1] / x[:, j:j + 1]
            out.append(np.where(np.isfinite(ratio), ratio, np.nan))
        return np.hstack(out)


def pairwise_rule(train: TrainSet) -> Decide | None:
    """The relation learner (informational): boosted trees per outcome field over the
    pairwise differences and ratios of the numeric leaves that matter most (``PairMatrix``).
    It learns the task's own relations — an amount against a cap, a share of a fee — from
    train's answers, without a domain rule: it measures how far arithmetic with no meaning
    attached goes, not a shortcut a task must defeat. None without scikit-learn or without
    two numeric leaves printed in most views."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return None
    views, leaves = _train_leaves(train)
    fields = [f for f, _ in train.labels[0]]
    matrix = PairMatrix(leaves, [dict(lab)[fields[0]] for lab in train.labels])
    if len(matrix.names) < 2:
        return None
    return _decoder(train, views, leaves, matrix,
                    functools.partial(boosted_trees, categorical=matrix.categorical))


PAIR_DATES = 24  # the date leaves the date relation learner compares pairwise
DATE_PRESENT = 0.1  # ... among those printed in at least this share of train views


@functools.cache
def _holiday_array(lo: int, hi: int) -> Any:
    import numpy as np

    return np.array([h.isoformat() for y in range(lo, hi + 1) for h in federal_holidays(y)],
                    dtype="datetime64[D]")


def business_day_index(ordinals: Any) -> Any:
    """Each date (a proleptic ordinal, NaN where missing) as the number of business days —
    Monday to Friday, the audit's own observed federal holidays off — from 2000-01-01 to it:
    the difference of two indices is the business days between the two dates
    (``numpy.busday_count``), so every pair costs one subtraction. The holidays cover every
    year from 2000 to the data's span, so the count is the same whatever rows are asked."""
    import numpy as np

    x = np.asarray(ordinals, dtype=float)
    out = np.full(x.shape, np.nan)
    ok = ~np.isnan(x)
    if not ok.any():
        return out
    epoch = dt.date(2000, 1, 1).toordinal()
    days = (x[ok].astype(np.int64) - dt.date(1970, 1, 1).toordinal()).astype("datetime64[D]")
    lo = min(2000, dt.date.fromordinal(int(x[ok].min())).year) - 1
    hi = max(2000, dt.date.fromordinal(int(x[ok].max())).year) + 1
    start = np.datetime64(dt.date.fromordinal(epoch).isoformat(), "D")
    out[ok] = np.busday_count(start, days, holidays=_holiday_array(lo, hi))
    return out


class DateMatrix:
    """The ``PAIR_DATES`` date leaves printed in the most train views, every pairwise
    difference between them in calendar days and in business days (Monday to Friday, the
    observed federal holidays off: ``business_day_index``), and each one's weekday and hour —
    in UTC where the timestamp prints its offset: the columns a learner needs to find "this
    was sent two business days after that" or "booked in the evening" without knowing which
    date means what, or any time zone. Columns constant or never printed on train are
    dropped."""

    def __init__(self, leaves: list[Leaves]) -> None:
        import numpy as np

        n = len(leaves)
        count = Counter(k[:-len("@day")] for lv in leaves for k in lv.dates
                        if k.endswith("@day"))
        self.names = sorted((k for k, c in count.items() if c >= DATE_PRESENT * n),
                            key=lambda k: (-count[k], k))[:PAIR_DATES]
        pairs = list(itertools.combinations(self.names, 2))
        columns = [*(f"{a} - {b}" for a, b in pairs), *(f"{a} -bd {b}" for a, b in pairs),
                   *(f"{k}@{part}" for k in self.names for part in ("weekday", "hour"))]
        x = self._all(leaves)
        self.keep = [j for j in range(x.shape[1])
                     if np.any(~np.isnan(x[:, j])) and np.nanstd(x[:, j]) > 0]
        self.columns = [columns[j] for j in self.keep]
        self.categorical = [False] * len(self.columns)

    def _all(self, leaves: list[Leaves]) -> Any:
        import numpy as np

        def part(name: str) -> Any:
            return np.array([[lv.dates.get(f"{k}@{name}", np.nan) for k in self.names]
                             for lv in leaves]).reshape(len(leaves), len(self.names))

        day = part("day")
        business = business_day_index(day)
        pairs = list(itertools.combinations(range(len(self.names)), 2))
        out = [day[:, i:i + 1] - day[:, j:j + 1] for i, j in pairs]
        out.extend(business[:, i:i + 1] - business[:, j:j + 1] for i, j in pairs)
        weekday, hour = part("weekday"), part("hour")
        utc = np.array([[lv.utc_hours.get(k, np.nan) for k in self.names] for lv in leaves]
                       ).reshape(len(leaves), len(self.names))
        hour = np.where(np.isnan(utc), hour, utc)  # the printed hour where no offset is
        out.extend(m[:, i:i + 1] for i in range(len(self.names)) for m in (weekday, hour))
        return np.hstack(out) if out else np.empty((len(leaves), 0))

    def transform(self, leaves: list[Leaves]) -> Any:
        return self._all(leaves)[:, self.keep]


def pairwise_dates_rule(train: TrainSet) -> Decide | None:
    """The date relation learner (informational, like ``pairwise_numbers``): boosted trees
    per outcome field over every pairwise difference between the view's dates in calendar and
    in business days, and each date's weekday and UTC hour (``DateMatrix``). It learns lags —
    how many business days after the booking the estimate went out — which is what a deadline
    task asks for, without knowing which date means what or any time zone: red team round 5
    read adversarial's finding at 0.78 this way, round 6 passed it 0.892 with the differences
    and each timestamp's UTC hour. None without scikit-learn or two dates printed in 10% of
    train views."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return None
    views, leaves = _train_leaves(train)
    matrix = DateMatrix(leaves)
    if len(matrix.names) < 2 or not matrix.columns:
        return None
    return _decoder(train, views, leaves, matrix,
                    functools.partial(boosted_trees, categorical=matrix.categorical))


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
    for name, kinds in LEARNED_AGENTS.items():
        rule = learned_rule(train, kinds, LEARNER.get(name, "boosted"))
        if rule is not None:
            out[name] = lambda rule=rule: H(decide=rule)
    passmax = pass_rule(train)
    if passmax is not None:
        out["pass_maximiser"] = lambda: H(decide=passmax)
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


def relation_agents(task: str, train: TrainSet) -> dict[str, Callable[[], Any]]:
    """The relation learners, reported apart and held to no bar: they compare fields, which is
    what the tasks ask for, and show how much of a task arithmetic without meaning learns."""
    H = heuristic_class(task)  # noqa: N806 - a class
    out: dict[str, Callable[[], Any]] = {}
    for name, make_rule in RELATION_RULES.items():
        rule = make_rule(train)
        if rule is not None:
            out[name] = lambda rule=rule: H(decide=rule)
    return out


RELATION_RULES: dict[str, Callable[[TrainSet], Decide | None]] = {
    "pairwise_numbers": pairwise_rule, "pairwise_dates": pairwise_dates_rule}


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
WILSON_Z = 1.959964  # the normal quantile of a two-sided 95% interval


def wilson(hits: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of a rate of ``hits`` in ``n`` (95% by default): a pass rate
    over 200 scenarios is a sample, and a reader comparing it with a bar a few points away
    needs its spread. Unlike the normal approximation it stays inside [0, 1] and is not
    zero-width at 0 or n. (0, 1) for no episodes."""
    if n <= 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at 0 and n the bound is exactly 0 or 1 (the floating-point sum can miss it by an ulp)
    return (0.0 if hits == 0 else max(0.0, centre - half),
            1.0 if hits == n else min(1.0, centre + half))


def selected_on_dev(dev: dict[str, Any], test: dict[str, Any]) -> dict[str, Any]:
    """The shortcut with the best dev pass rate, and per outcome field the shortcut with the
    best dev accuracy on it, each reported with its test figure and that figure's 95% Wilson
    interval. The best of ~30 agents on one split is biased upward (the winner's curse: some
    agent is lucky on those scenarios); choosing on dev and reading test is not. Ties go to
    the agent listed first. Agents missing from either report are not candidates."""
    on_test = {r["agent"]: r for r in test["agents"]}
    cands = [r for r in dev["agents"] if r["kind"] == "shortcut" and r["agent"] in on_test]
    n = test["scenarios"]

    def pick(value: Callable[[dict[str, Any]], float], read: Callable[[dict[str, Any]], float]
             ) -> dict[str, Any] | None:
        if not cands:
            return None
        best = max(cands, key=value)  # max keeps the first of equals
        got = read(on_test[best["agent"]])
        lo, hi = wilson(round(got * n), n)
        return {"agent": best["agent"], "dev": value(best), "test": got,
                "test_ci": [round(lo, 4), round(hi, 4)]}

    return {"pass": pick(lambda r: r["pass_rate"], lambda r: r["pass_rate"]),
            "fields": {f: pick(lambda r, f=f: (r["field_accuracy"][f]
                                               if f in judged_fields(r["agent"], [f]) else -1.0),
                               lambda r, f=f: r["field_accuracy"][f])
                       for f in test["fields"] if f in dev["fields"]}}


@dataclass
class AgentResult:
    agent: str
    kind: str  # reference | shortcut | exploit | relation
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
                "pass_ci": [round(v, 4) for v in wilson(self.passed, self.episodes)],
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
    return audit_splits(task, [split], limit=limit, train_limit=train_limit, agents=agents,
                        progress=progress)[0]


def audit_splits(task: str, splits: Iterable[str], *, limit: int | None = None,
                 train_limit: int | None = None, agents: Iterable[str] | None = None,
                 progress: bool = False) -> list[dict[str, Any]]:
    """``audit_task`` on several splits with the shortcuts fitted once: a leak's size depends
    on which scenarios land in a split (the note-overlap rule of red team round 3 read 0.54 of
    test and 0.87 of dev), so a task is judged on dev and test alike. Each split's report is
    the one ``audit_task`` gives for it alone."""
    splits = list(splits)
    if task == "medical_coding":  # code lists, not classes: its own shortcuts
        from .audit_coding import audit

        return [audit(split, limit=limit, train_limit=train_limit, agent_names=agents)
                for split in splits]
    if task not in BILLING_TASKS:
        raise ValueError(f"clarus audit covers the billing tasks ({', '.join(BILLING_TASKS)}); "
                         f"got {task!r}")
    train = load_train(task, train_limit)
    shortcuts = shortcut_agents(task, train)
    wanted = None if agents is None else set(agents)
    relations = ({} if wanted is not None and not wanted & set(RELATION_RULES)
                 else relation_agents(task, train))
    reports = [_audit_split(task, split, train, shortcuts, relations, limit=limit,
                            agents=agents, progress=progress) for split in splits]
    if "dev" in splits and "test" in splits:
        by = dict(zip(splits, reports, strict=True))
        by["test"]["selected_on_dev"] = selected_on_dev(by["dev"], by["test"])
    return reports


def _audit_split(task: str, split: str, train: TrainSet,
                 shortcuts: dict[str, Callable[[], Any]],
                 relations: dict[str, Callable[[], Any]], *, limit: int | None,
                 agents: Iterable[str] | None, progress: bool) -> dict[str, Any]:
    # reference and exploit agents are made afresh per split: random's stream restarts
    groups = {"reference": reference_agents(task), "shortcut": shortcuts,
              "exploit": exploit_agents(task), "relation": relations}
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
        "pass_rate": max((r["pass_rate"] for r in rows
                          if r["kind"] in ("shortcut", "exploit")), default=0.0),
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
    for kind in ("reference", "shortcut", "exploit", "relation"):
        if kind == "relation" and any(r["kind"] == kind for r in report["agents"]):
            lines.append("relation learners (informational: they compare fields, as the task "
                         "asks; held to no bar)")
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
    sel = report.get("selected_on_dev")
    if sel and sel["pass"]:
        p = sel["pass"]
        fl = "; ".join(f"{short[f]} {v['agent']} {v['test']:.3f} [{v['test_ci'][0]:.3f}, "
                       f"{v['test_ci'][1]:.3f}]" for f, v in sel["fields"].items() if v)
        lines.append(f"selected on dev, read on test (95% Wilson): pass {p['agent']} "
                     f"{p['test']:.3f} [{p['test_ci'][0]:.3f}, {p['test_ci'][1]:.3f}]; {fl}")
    lines.append(verdict(report))
    return "\n".join(lines)


FIELD_SLACK = 0.10  # a shortcut may beat a field's modal share by at most this much
PASS_SLACK = 0.05  # and pass at most the most common whole answer's share plus this much


# shortcuts held to the pass bar only: they trade field accuracy for answers they can pay
PASS_ONLY = frozenset({"pass_maximiser"})


def judged_fields(agent: str, fields: list[str]) -> list[str]:
    """The outcome fields a shortcut is held to: all of them, except the filing a partial
    reasoner works out itself (it is the reasoning half of that agent, not a shortcut), and
    none for the pass maximiser (it gives up a field's likeliest value for an answer it can
    pay; the per-field shortcuts over the same leaves measure the fields)."""
    if agent in PASS_ONLY:
        return []
    return [f for f in fields if not (agent.startswith("partial_") and f == "resolution_type")]


def verdict(report: dict[str, Any]) -> str:
    """Whether the task holds the shortcut bar, and every shortcut that breaks it: a reader
    should not have to compare columns to see a leak."""
    short = {"finding": "finding", "responsible_party": "party",
             "resolution_type": "resolution", "appeal_reason": "reason"}
    breaks = []
    # rounded: an accuracy exactly at the bar (0.34 against 0.24 + 0.10) holds it
    cap = round(report["modal_outcome"]["share"] + PASS_SLACK, 9)
    for r in report["agents"]:
        if r["kind"] not in ("shortcut", "exploit"):
            continue
        if r["pass_rate"] > cap:
            breaks.append(f"{r['agent']} pass {r['pass_rate']:.3f} > {cap:.3f}")
        if r["kind"] != "shortcut":
            continue
        for f in judged_fields(r["agent"], report["fields"]):
            bar = round(report["modal_share"][f]["share"] + FIELD_SLACK, 9)
            if r["field_accuracy"][f] > bar:
                breaks.append(f"{r['agent']} {short[f]} {r['field_accuracy'][f]:.3f} > "
                              f"{bar:.3f}")
    if not breaks:
        return (f"shortcut bar held: every field <= modal + {FIELD_SLACK:.2f}, "
                f"pass <= most common whole answer + {PASS_SLACK:.2f}")
    return "shortcut bar BROKEN: " + "; ".join(breaks)
