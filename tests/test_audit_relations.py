"""Round-4 learners of `clarus audit` on synthetic views where a leak is planted: the words of a
free text (``rf_words``), a date's distance to a federal holiday (``gb_dates``), and a
relation between two amounts (``pairwise_numbers``, informational). Each test fails if the
learner, or the feature it needs, is removed or broken; each control shows the leak is out of
reach of the learners that were there before."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

from clarus_env.audit import (
    LEARNED_AGENTS,
    LEARNER,
    TrainSet,
    federal_holidays,
    format_audit,
    holiday_distance,
    verdict,
    view_leaves,
    words,
)

POOL = ("lumbar", "cervical", "session", "treated", "patient", "tolerated", "exercise",
        "stimulation", "assessed", "plan", "review", "follow", "noted", "range", "motion",
        "strength", "gait", "balance", "manual", "therapy", "home", "program", "pain", "scale")


def test_federal_holidays_follow_5_usc_6103_and_the_observed_day_rule() -> None:
    d = dt.date
    assert federal_holidays(2026) == (
        d(2026, 1, 1), d(2026, 1, 19), d(2026, 2, 16), d(2026, 5, 25), d(2026, 6, 19),
        d(2026, 7, 3),  # July 4 is a Saturday: observed Friday
        d(2026, 9, 7), d(2026, 10, 12), d(2026, 11, 11), d(2026, 11, 26), d(2026, 12, 25))
    h27 = federal_holidays(2027)
    assert d(2027, 6, 18) in h27 and d(2027, 7, 5) in h27  # Saturday -> Friday, Sunday -> Monday
    assert d(2027, 12, 24) in h27 and d(2027, 12, 31) in federal_holidays(2028)  # Jan 1 2028: Sat
    assert d(2020, 6, 19) not in federal_holidays(2020)  # Juneteenth from 2021
    assert len(federal_holidays(2025)) == 11


def test_holiday_distance_counts_days_either_side() -> None:
    assert holiday_distance(dt.date(2026, 7, 3)) == (0, 0)
    assert holiday_distance(dt.date(2026, 7, 6)) == (3, 63)  # next: Labor Day, Sept 7
    assert holiday_distance(dt.date(2026, 12, 30)) == (5, 2)  # next: Jan 1 2027
    lv = view_leaves({"records": {"log": {"at": "2026-05-22T23:10:00Z", "note": "x"}}})
    assert lv.holidays["log.at@until_holiday"] == 3.0  # Memorial Day, May 25
    assert lv.holidays["log.at@holiday"] == 3.0 and "log.at@day" not in lv.holidays
    assert LEARNED_AGENTS["gb_dates"] == ("dates", "holidays")
    assert "holidays" not in LEARNED_AGENTS["gb_records"]  # kept as it was


def test_words_drop_digits_and_case() -> None:
    assert words("Seen 10:15 by Dr. Rossi, NP; left knee x2 re-check") == {
        "seen", "by", "dr", "rossi", "np", "left", "knee", "x", "re-check"}


def _trainset(rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> TrainSet:
    return TrainSet("synthetic", [{"expected": exp} for _, exp in rows],
                    views=[view for view, _ in rows])


def _accuracy(rule: Any, rows: list[tuple[dict[str, Any], dict[str, Any]]], key: str) -> float:
    return sum(rule(view)[key] == exp[key] for view, exp in rows) / len(rows)


def _rule(train: TrainSet, name: str) -> Any:
    from clarus_env.audit import learned_rule

    rule = learned_rule(train, LEARNED_AGENTS[name], LEARNER.get(name, "boosted"))
    assert rule is not None
    return rule


def _worded(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two notes of pool words and numbers, the same length in every branch; in the
    'stands' branch one word of the second note is 'scribe'. No leaf and no overlap count
    tells the branches apart, only the word."""
    stands = rng.random() < 0.5

    def note(mark: bool) -> str:
        ws = rng.sample(POOL, 7)
        if mark:
            ws[rng.randrange(7)] = "scribe"
        return f"{ws[0]} {ws[1]} {rng.randint(5, 60)} min {ws[2]} {ws[3]} {ws[4]} {ws[5]} {ws[6]}"

    view = {"complaint": "", "records": {
        "edit": {"indicator": rng.choice(("0", "1"))},
        "provider_record": {"notes": [note(False), note(stands and rng.random() < 0.95)]}}}
    return view, {"finding": "stands" if stands else "distinct", "amount_cents": 0}


def test_word_forest_finds_a_word_in_the_notes() -> None:
    rng = random.Random(5)
    train = _trainset([_worded(rng) for _ in range(400)])
    fresh = [_worded(rng) for _ in range(300)]
    assert _accuracy(_rule(train, "rf_words"), fresh, "finding") >= 0.9
    # the control: leaves and overlap counts stay near the modal share (~0.5)
    assert _accuracy(_rule(train, "gb_records"), fresh, "finding") <= 0.65
    assert _accuracy(_rule(train, "overlap_records"), fresh, "finding") <= 0.65


def _near_holiday(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """A booking date over ten years; 'late' when it falls within a day of an observed
    federal holiday (half the rows), else at least three days away. Ten years leave a
    couple of rows per holiday window: day numbers cannot be memorised."""
    near = rng.random() < 0.5
    while True:
        day = dt.date(2020, 1, 1) + dt.timedelta(days=rng.randrange(3650))
        gap = min(holiday_distance(day))
        if (near and gap <= 1) or (not near and gap >= 3):
            break
    view = {"complaint": "", "records": {"log": {
        "booked": f"{day.isoformat()}T{rng.randrange(8, 20):02d}:00:00Z"}}}
    return view, {"finding": "late" if near else "timely", "amount_cents": 0}


def test_gb_dates_finds_dates_drawn_near_federal_holidays() -> None:
    from clarus_env.audit import learned_rule

    rng = random.Random(9)
    train = _trainset([_near_holiday(rng) for _ in range(500)])
    fresh = [_near_holiday(rng) for _ in range(300)]
    assert _accuracy(_rule(train, "gb_dates"), fresh, "finding") >= 0.95
    # the control: day number, weekday and hour alone (the round-3 gb_dates) fall short
    old = learned_rule(train, ("dates",))
    assert old is not None and _accuracy(old, fresh, "finding") <= 0.85


def _related(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """An estimate and a third amount drawn log-uniform ($1 to $10,000) in every branch, the
    bill 0.8 to 1.4 times the estimate; the finding is whether the bill exceeds the estimate
    by more than 10%, the amount owed the bill. Each amount alone says next to nothing."""
    estimate, other = (round(10 ** rng.uniform(0, 4), 2) for _ in range(2))
    billed = round(estimate * rng.uniform(0.8, 1.4), 2)
    over = billed > 1.1 * estimate
    view = {"complaint": "", "records": {"bill": {
        "billed": f"{billed:.2f}", "estimate": f"{estimate:.2f}", "paid": f"{other:.2f}"}}}
    return view, {"finding": "over" if over else "fine",
                  "amount_cents": round(billed * 100) if over else 0}


def test_pairwise_numbers_learns_a_ratio_between_two_amounts() -> None:
    from clarus_env.audit import PairMatrix, pairwise_rule

    rng = random.Random(13)
    train = _trainset([_related(rng) for _ in range(500)])
    fresh = [_related(rng) for _ in range(300)]
    rule = pairwise_rule(train)
    assert rule is not None
    assert _accuracy(rule, fresh, "finding") >= 0.95
    assert _accuracy(rule, fresh, "amount_cents") >= 0.95  # the pointer copies the amount
    # the control: boosted trees over the amounts one by one
    assert _accuracy(_rule(train, "gb_numbers"), fresh, "finding") <= 0.85
    m = PairMatrix([view_leaves(v) for v in train.views or []],
                   [s["expected"]["finding"] for s in train.scenarios])
    assert "bill.billed / bill.estimate" in m.columns or "bill.estimate / bill.billed" in m.columns


def test_relation_rows_are_printed_apart_and_never_judged() -> None:
    row = {"pass_rate": 0.0, "outcome_accuracy": 0.9, "mean_score": 0.9, "mean_return": 1.0,
           "field_accuracy": {"finding": 0.9}}
    report = {"task": "t", "split": "test", "scenarios": 10, "train_scenarios": 10,
              "fields": ["finding"], "modal_share": {"finding": {"share": 0.3, "value": "x"}},
              "modal_outcome": {"share": 0.3, "value": {"finding": "x"}},
              "best_shortcut": {"pass_rate": 0.0, "outcome_accuracy": 0.0,
                                "field_accuracy": {"finding": 0.3}},
              "agents": [{**row, "agent": "pairwise_numbers", "kind": "relation",
                          "pass_rate": 0.9}]}
    assert verdict(report).startswith("shortcut bar held")
    text = format_audit(report)
    assert text.index("relation learners") < text.index("pairwise_numbers")
    report["agents"][0]["kind"] = "shortcut"
    assert verdict(report).startswith("shortcut bar BROKEN")


@pytest.mark.parametrize("agents", [["modal", "rf_words", "pairwise_numbers"]])
def test_audit_reports_the_new_learners_on_a_small_split(agents: list[str]) -> None:
    from clarus_env.audit import audit_splits

    rep = audit_splits("abductive_conflict", ["dev"], limit=3, train_limit=60,
                       agents=agents)[0]
    assert [r["agent"] for r in rep["agents"]] == agents
    assert [r["kind"] for r in rep["agents"]] == ["shortcut", "shortcut", "relation"]
