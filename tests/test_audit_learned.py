"""The learned shortcuts of `clarus audit` (boosted trees over the leaves an agent is shown,
and the pairwise overlap of side-by-side free texts), on synthetic views where a leak is
planted: each test fails if the shortcut, or the feature it needs, is removed or broken."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

pytest.importorskip("sklearn")

from clarus_env.audit import (  # noqa: E402 - after the skip
    LEARNED_AGENTS,
    TrainSet,
    audit_splits,
    learned_rule,
    overlap_features,
    text_groups,
    view_leaves,
)

WORDS = ("lumbar", "cervical", "left", "right", "session", "treated", "patient", "tolerated",
         "exercise", "stimulation", "assessed", "plan", "review", "follow", "up", "noted")


def _trainset(rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> TrainSet:
    return TrainSet("synthetic", [{"expected": exp} for _, exp in rows],
                    views=[view for view, _ in rows])


def _accuracy(rule: Any, rows: list[tuple[dict[str, Any], dict[str, Any]]], key: str) -> float:
    return sum(rule(view)[key] == exp[key] for view, exp in rows) / len(rows)


def _leaky_record(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """A bill whose finding is a threshold on one printed amount, whose party is one of
    several categorical leaves, whose filing is the weekday of a printed date (learnable only
    from the date's parts, not from its day number), and whose amount is printed in one leaf."""
    due = rng.randint(1000, 20000) / 100
    day = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(365))
    kind = rng.choice(("clinic", "lab", "imaging"))
    view = {"complaint": "I was billed.", "records": {
        "bill": {"due": f"{due:.2f}", "other": f"{rng.randint(0, 9999) / 100:.2f}",
                 "kind": kind, "colour": rng.choice(("red", "blue", "green")),
                 "posted": f"{day.isoformat()}T{rng.randrange(24):02d}:00:00Z",
                 "lines": [{"fee": f"{rng.randint(100, 900)}.00"}
                           for _ in range(rng.randint(1, 3))]}}}
    expected = {"finding": "overcharge" if due > 100 else "fine",
                "responsible_party": "provider" if kind == "clinic" else "insurer",
                "resolution_type": "dispute" if day.weekday() >= 5 else "refund",
                "amount_cents": round(due * 100) if due > 100 else 0}
    return view, expected


def test_boosted_trees_find_amount_weekday_and_label_leaks_and_copy_the_amount() -> None:
    rng = random.Random(7)
    train = _trainset([_leaky_record(rng) for _ in range(400)])
    fresh = [_leaky_record(rng) for _ in range(300)]
    rule = learned_rule(train, LEARNED_AGENTS["gb_records"])
    assert rule is not None
    assert _accuracy(rule, fresh, "finding") >= 0.95  # a threshold on one amount
    assert _accuracy(rule, fresh, "responsible_party") >= 0.95  # one categorical leaf
    # weekend vs weekday is 2/7 vs 5/7: the modal answer scores ~0.71, the weekday part 1.0
    assert _accuracy(rule, fresh, "resolution_type") >= 0.95
    # the amount is copied from the leaf that held it on train, $0 where nothing is owed
    assert _accuracy(rule, fresh, "amount_cents") >= 0.95
    # the same fit in the same process gives the same answers (one thread, fixed state)
    again = learned_rule(train, LEARNED_AGENTS["gb_records"])
    assert again is not None
    assert [rule(v) for v, _ in fresh[:50]] == [again(v) for v, _ in fresh[:50]]


def _note(numbers: list[str], rng: random.Random) -> str:
    words = rng.sample(WORDS, 6)
    return (f"{words[0]} {words[1]} {numbers[0]} {words[2]} {words[3]} {numbers[1]} "
            f"{words[4]} {words[5]}.")


def _paired_notes(rng: random.Random, shape: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two notes whose finding is whether they repeat a number (and, when the edit is 0,
    always 'stands'): each note alone is drawn alike in every branch, so only comparing the
    two tells. ``shape`` is how the record holds them (a list, an object, a list of lines)."""
    first = [f"{rng.randint(10, 99)}:{rng.choice(('00', '15', '30', '45'))}",
             str(rng.randint(2, 30))]
    same = rng.random() < 0.5
    fresh = [f"{rng.randint(10, 99)}:{rng.choice(('05', '20', '35', '50'))}",
             str(rng.randint(31, 60))]
    second = [first[0], fresh[1]] if same else fresh
    rng.shuffle(second)
    a, b = _note(first, rng), _note(second, rng)
    indicator = rng.choice(("0", "1", "1", "1"))
    holder: Any = {"list": {"notes": [a, b]}, "object": {"notes": {"first": a, "second": b}},
                   "lines": {"lines": [{"code": "97110", "description": a},
                                       {"code": "97140", "description": b}]}}[shape]
    view = {"complaint": "", "records": {"edit": {"indicator": indicator},
                                         "provider_record": holder}}
    finding = "stands" if indicator == "0" or same else "distinct"
    return view, {"finding": finding, "amount_cents": 0}


@pytest.mark.parametrize("shape", ["list", "object", "lines"])
def test_overlap_shortcut_finds_notes_that_repeat_a_number(shape: str) -> None:
    rng = random.Random(11)
    train = _trainset([_paired_notes(rng, shape) for _ in range(400)])
    fresh = [_paired_notes(rng, shape) for _ in range(300)]
    overlap = learned_rule(train, LEARNED_AGENTS["overlap_records"])
    assert overlap is not None
    assert _accuracy(overlap, fresh, "finding") >= 0.95


def test_the_planted_overlap_leak_is_in_the_pair_not_in_a_leaf() -> None:
    """The control for the test above: the boosted trees over single leaves stay near the
    modal share (stands ~0.625), so only the pairwise features can find it."""
    rng = random.Random(11)
    train = _trainset([_paired_notes(rng, "list") for _ in range(400)])
    fresh = [_paired_notes(rng, "list") for _ in range(300)]
    leaves = learned_rule(train, LEARNED_AGENTS["gb_records"])
    assert leaves is not None and _accuracy(leaves, fresh, "finding") <= 0.75


def test_no_overlap_shortcut_without_two_free_texts_side_by_side() -> None:
    rng = random.Random(3)
    train = _trainset([_leaky_record(rng) for _ in range(100)])
    assert learned_rule(train, LEARNED_AGENTS["overlap_records"]) is None


def test_text_groups_follow_the_data_shape_and_overlap_counts_tokens() -> None:
    texts = view_leaves({"records": {"r": {
        "notes": ["seen at 10:15 for 20 min", "seen at 10:15 for 35 min", "short"],
        "lines": [{"description": "office visit 20 min today"},
                  {"description": "therapy 15 min later today"}],
        "memo": {"a": "first free text here", "b": "second free text there"}}}}).texts
    groups = text_groups(texts)
    assert groups["r.notes"] == {"0": "seen at 10:15 for 20 min", "1": "seen at 10:15 for 35 min"}
    assert set(groups["r.lines[*].description"]) == {"0", "1"}
    assert set(groups["r.memo"]) == {"a", "b"}
    feats = overlap_features(texts)
    # tokens: seen at 10:15 for 20 min / seen at 10:15 for 35 min -> 5 shared of 7
    assert feats["r.notes|0~1|shared"] == 5.0
    assert feats["r.notes|0~1|shared_numbers"] == 1.0  # the clock time is one token
    assert feats["r.notes|0~1|jaccard"] == pytest.approx(5 / 7)
    assert feats["r.notes|0~1|jaccard_numbers"] == pytest.approx(1 / 3)
    assert feats["r.lines[*].description|0~1|shared_numbers"] == 0.0
    # only the free texts asked for are compared
    assert overlap_features(texts, free=["r.memo.a", "r.memo.b"]).keys() == {
        f"r.memo|a~b|{s}" for s in ("shared", "shared_numbers", "jaccard", "jaccard_numbers")}


def test_view_leaves_split_dates_into_day_weekday_and_hour() -> None:
    lv = view_leaves({"records": {"log": {"at": "2026-03-07T21:30:00Z", "on": "2026-03-09",
                                          "paid": "$1,204.50", "n": 3, "ok": True}}})
    assert lv.dates["log.at@weekday"] == 5.0 and lv.dates["log.at@hour"] == 21.5
    assert lv.dates["log.on@day"] == float(dt.date(2026, 3, 9).toordinal())
    assert "log.on@hour" not in lv.dates
    assert lv.numbers["log.paid"] == 1204.5 and lv.numbers["log.n"] == 3.0
    assert lv.labels["log.ok"] == "True"


def test_audit_on_two_splits_fits_once_and_reports_each() -> None:
    reports = audit_splits("abductive_conflict", ["dev", "test"], limit=3, train_limit=60,
                           agents=["modal", "gb_records", "overlap_records"])
    assert [r["split"] for r in reports] == ["dev", "test"]
    for rep in reports:
        assert [r["agent"] for r in rep["agents"]] == ["modal", "gb_records", "overlap_records"]
        assert all(r["episodes"] == 3 for r in rep["agents"])
