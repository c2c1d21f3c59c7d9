"""Round-6 learners of `clarus audit` (red team round 5) on synthetic views where a leak is
planted: how often a word occurs in a record (``gb_wordcounts``, alone and with the numeric
leaves), the digit runs of a free text by position (``note_numbers``), the whole answer an
agent can also pay to the cent (``pass_maximiser``), and the lag between two dates
(``pairwise_dates``, informational). Each test fails if the learner, or the feature it needs,
is removed or broken; each control shows the leak is out of reach of the learners that were
there before, or that the learner finds nothing where nothing is planted."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

pytest.importorskip("sklearn")

from clarus_env.audit import (  # noqa: E402 - after the skip
    LEARNED_AGENTS,
    RELATION_RULES,
    format_audit,
    learned_rule,
    pass_rule,
    record_word_counts,
    verdict,
    view_leaves,
)
from tests.test_audit_relations import _accuracy, _rule, _trainset  # noqa: E402

FILLER = ("Card authorization", "Settlement batch closed", "Refund issued to card",
          "Online portal payment", "Statement fee waived", "Balance transfer posted")


def _passes(rule: Any, rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> float:
    """Whole answer and amount right, as a pass needs."""
    return sum(all(rule(view)[k] == exp[k] for k in exp) for view, exp in rows) / len(rows)


def _log(rng: random.Random, copays: int) -> list[dict[str, Any]]:
    """Six card events, ``copays`` of them a copay capture, in random order; every log
    holds at least one, so the word is present in every view."""
    def ref() -> str:  # a reference number makes each description a free text
        return f", ref {rng.randint(1000, 9999)}"

    events = [{"description": "Copay at check-in" + ref(), "type": "capture"}
              for _ in range(copays)]
    events += [{"description": rng.choice(FILLER) + ref(), "type": "capture"}
               for _ in range(6 - copays)]
    rng.shuffle(events)
    return events


def _counted(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """The finding is whether the processor log holds a second copay capture (one more line of
    a kind: same words, same list length); the party is a threshold on the amount due. With
    ``planted`` False the second capture is drawn alike in both branches."""
    dup = rng.random() < 0.5
    second = dup if planted else rng.random() < 0.5
    due = rng.randint(1000, 20000) / 100
    view = {"complaint": "", "records": {
        "processor_log": {"transactions": _log(rng, 2 if second else 1)},
        "statement": {"due": f"{due:.2f}"}}}
    return view, {"finding": "duplicate_charge" if dup else "other",
                  "responsible_party": "provider" if due > 100 else "insurer",
                  "amount_cents": 0}


def test_record_word_counts_read_every_list_item_and_drop_digits_dates_amounts() -> None:
    record = {"log": [{"d": "Copay at check-in 10:15"} for _ in range(11)],
              "at": "2026-03-01T10:00:00Z", "paid": "$25.00", "note": "copay copay"}
    counts = record_word_counts(record)
    assert counts["copay"] == 13 and counts["check-in"] == 11  # past the 8 items leaves keep
    assert not any(w[0].isdigit() for w in counts) and "z" not in counts
    lv = view_leaves({"records": {"processor_log": record}})
    assert lv.counts["processor_log~copay"] == 13.0


def test_word_counts_find_one_more_line_of_a_kind() -> None:
    rng = random.Random(21)
    train = _trainset([_counted(rng) for _ in range(500)])
    fresh = [_counted(rng) for _ in range(300)]
    assert _accuracy(_rule(train, "gb_wordcounts"), fresh, "finding") >= 0.95
    # the control: the leaves one by one (list lengths included) and the overlap of
    # side-by-side texts stay near the modal share (~0.5). (Word presence by list position,
    # rf_words, reads a count in a list this short; the real logs run past the eight items
    # the leaves keep, and round 5 found rf_words short of the count there.)
    assert _accuracy(_rule(train, "gb_records"), fresh, "finding") <= 0.65
    assert _accuracy(_rule(train, "overlap_records"), fresh, "finding") <= 0.65


def test_word_counts_with_numbers_read_the_count_and_the_amount() -> None:
    rng = random.Random(22)
    train = _trainset([_counted(rng) for _ in range(500)])
    fresh = [_counted(rng) for _ in range(300)]
    both = _rule(train, "gb_wordcounts_numbers")
    assert _accuracy(both, fresh, "finding") >= 0.95
    assert _accuracy(both, fresh, "responsible_party") >= 0.95
    # counts alone cannot see the amount: the party stays near its modal share (~0.53)
    assert _accuracy(_rule(train, "gb_wordcounts"), fresh, "responsible_party") <= 0.65


def test_word_counts_find_nothing_where_the_count_is_drawn_alike() -> None:
    rng = random.Random(23)
    train = _trainset([_counted(rng, planted=False) for _ in range(500)])
    fresh = [_counted(rng, planted=False) for _ in range(300)]
    assert _accuracy(_rule(train, "gb_wordcounts"), fresh, "finding") <= 0.6


def _clocked(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two therapy notes of the same words; the finding is whether the second session started
    on a quarter-hour minute (:00/:15/:30/:45) or five past one — a printed clock minute the
    notes never repeat, so neither overlap nor words nor any leaf tells. With ``planted`` False
    the minute is drawn alike in both branches."""
    distinct = rng.random() < 0.5
    on_grid = (not distinct) if planted else rng.random() < 0.5
    h1, m1 = rng.randint(8, 16), rng.choice((0, 15, 30, 45))
    h2 = rng.randint(8, 16)
    m2 = rng.choice((0, 15, 30, 45) if on_grid else (5, 20, 35, 50))
    d1, d2 = rng.choice((15, 20, 30)), rng.choice((15, 20, 30))
    notes = [f"Line 1 (97110): therapeutic exercise, {h1}:{m1:02d} ({d1} min), lumbar spine.",
             f"Line 2 (97140): manual therapy, {h2}:{m2:02d} ({d2} min), lumbar spine."]
    view = {"complaint": "", "records": {"edit": {"indicator": rng.choice(("0", "1"))},
                                         "provider_record": {"notes": notes}}}
    return view, {"finding": "distinct" if distinct else "stands", "amount_cents": 0}


def test_note_numbers_read_a_clock_minute_by_position() -> None:
    rng = random.Random(31)
    train = _trainset([_clocked(rng) for _ in range(500)])
    fresh = [_clocked(rng) for _ in range(300)]
    assert _accuracy(_rule(train, "note_numbers"), fresh, "finding") >= 0.95
    # the control: the overlap compares whole tokens, leaves see no clock, and words drop
    # digits (the notes' words are the same in every view: no word forest is fitted)
    for name in ("overlap_records", "gb_records"):
        assert _accuracy(_rule(train, name), fresh, "finding") <= 0.65, name
    assert learned_rule(train, LEARNED_AGENTS["rf_words"], "forest") is None


def test_note_numbers_find_nothing_where_the_minute_is_drawn_alike() -> None:
    rng = random.Random(32)
    train = _trainset([_clocked(rng, planted=False) for _ in range(500)])
    fresh = [_clocked(rng, planted=False) for _ in range(300)]
    assert _accuracy(_rule(train, "note_numbers"), fresh, "finding") <= 0.6


def _payable(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """Three answers: duplicate_charge (30%, a second copay capture; the amount is printed as
    the copay), overcharge (40%, the modal answer; its amount is printed nowhere) and fine
    (30%, $0). Overcharge and fine look alike, so an agent that aims at the fields answers
    overcharge there and is never paid; one that aims at passing answers fine."""
    u = rng.random()
    finding = "duplicate_charge" if u < 0.3 else "overcharge" if u < 0.7 else "fine"
    copay = rng.randint(10, 60) * 100
    amount = {"duplicate_charge": copay, "overcharge": rng.randint(1000, 90000),
              "fine": 0}[finding]
    view = {"complaint": "", "records": {
        "processor_log": {"transactions": _log(rng, 2 if finding == "duplicate_charge" else 1)},
        "plan": {"copay": f"{copay / 100:.2f}", "other": f"{rng.randint(0, 9999) / 100:.2f}"}}}
    return view, {"finding": finding, "amount_cents": amount}


def test_pass_maximiser_answers_what_it_can_pay_to_the_cent() -> None:
    rng = random.Random(41)
    train = _trainset([_payable(rng) for _ in range(600)])
    fresh = [_payable(rng) for _ in range(300)]
    passmax = pass_rule(train)
    assert passmax is not None
    answers = [passmax(view) for view, _ in fresh]
    assert not any(a["finding"] == "overcharge" for a in answers)  # never paid on train
    # duplicate_charge with its copay, fine at $0: ~0.6, where the per-field shortcut,
    # answering the modal overcharge wherever the count is one, passes ~0.3-0.4
    passed = _passes(passmax, fresh)
    assert passed >= 0.5 and passed >= _passes(_rule(train, "gb_wordcounts"), fresh) + 0.1
    again = pass_rule(train)
    assert again is not None and [again(v) for v, _ in fresh[:40]] == answers[:40]


def _lagged(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """A booking and a delivery over two years; 'late' when the delivery came a week or more
    after the booking (7-10 days, else 0-3: the two weekdays tell the same in both branches).
    Each date alone (its day number, weekday, hour) says nothing. With ``planted`` False the
    finding is drawn apart from the lag."""
    booked = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(730))
    lag = rng.randint(0, 3) + rng.choice((0, 7))
    late = lag >= 7 if planted else rng.random() < 0.5
    sent = booked + dt.timedelta(days=lag)
    view = {"complaint": "", "records": {"log": {
        "booked": f"{booked.isoformat()}T{rng.randrange(8, 20):02d}:00:00Z",
        "sent": f"{sent.isoformat()}T{rng.randrange(8, 20):02d}:00:00Z",
        "service": (booked + dt.timedelta(days=rng.randint(10, 40))).isoformat()}}}
    return view, {"finding": "late" if late else "timely", "amount_cents": 0}


def test_pairwise_dates_learn_a_lag_between_two_dates() -> None:
    rng = random.Random(51)
    train = _trainset([_lagged(rng) for _ in range(500)])
    fresh = [_lagged(rng) for _ in range(300)]
    rule = RELATION_RULES["pairwise_dates"](train)
    assert rule is not None and _accuracy(rule, fresh, "finding") >= 0.95
    # the control: the dates one by one (day number, weekday, hour). (gb_dates' distances to
    # the holidays, small numbers that move with the date, let its trees approximate a lag
    # between two dates: 0.89 here.)
    alone = learned_rule(train, ("dates",))
    assert alone is not None and _accuracy(alone, fresh, "finding") <= 0.7


def test_pairwise_dates_find_nothing_where_the_lag_says_nothing() -> None:
    rng = random.Random(52)
    train = _trainset([_lagged(rng, planted=False) for _ in range(500)])
    fresh = [_lagged(rng, planted=False) for _ in range(300)]
    rule = RELATION_RULES["pairwise_dates"](train)
    assert rule is not None and _accuracy(rule, fresh, "finding") <= 0.6


def test_pairwise_dates_row_is_printed_apart_and_never_judged() -> None:
    row = {"agent": "pairwise_dates", "kind": "relation", "pass_rate": 0.9,
           "outcome_accuracy": 0.9, "mean_score": 0.9, "mean_return": 1.0,
           "field_accuracy": {"finding": 0.9}}
    report = {"task": "t", "split": "test", "scenarios": 10, "train_scenarios": 10,
              "fields": ["finding"], "modal_share": {"finding": {"share": 0.3, "value": "x"}},
              "modal_outcome": {"share": 0.3, "value": {"finding": "x"}},
              "best_shortcut": {"pass_rate": 0.0, "outcome_accuracy": 0.0,
                                "field_accuracy": {"finding": 0.3}},
              "agents": [row]}
    assert verdict(report).startswith("shortcut bar held")
    text = format_audit(report)
    assert text.index("relation learners") < text.index("pairwise_dates")


def test_audit_reports_the_round6_agents_on_a_small_split() -> None:
    from clarus_env.audit import audit_splits

    agents = ["gb_wordcounts", "gb_wordcounts_numbers", "note_numbers", "pass_maximiser",
              "pairwise_dates"]
    rep = audit_splits("deductive_liability", ["dev"], limit=2, train_limit=80,
                       agents=agents)[0]
    assert [r["agent"] for r in rep["agents"]] == agents
    assert [r["kind"] for r in rep["agents"]] == ["shortcut"] * 4 + ["relation"]


def test_pass_maximiser_is_held_to_the_pass_bar_only() -> None:
    from clarus_env.audit import judged_fields

    assert judged_fields("pass_maximiser", ["finding", "responsible_party"]) == []
    row = {"agent": "pass_maximiser", "kind": "shortcut", "pass_rate": 0.20,
           "outcome_accuracy": 0.2, "field_accuracy": {"finding": 0.9}}
    report = {"fields": ["finding"], "modal_share": {"finding": {"share": 0.3}},
              "modal_outcome": {"share": 0.2}, "agents": [row]}
    assert verdict(report).startswith("shortcut bar held")  # its fields are not judged
    row["pass_rate"] = 0.26
    assert verdict(report) == "shortcut bar BROKEN: pass_maximiser pass 0.260 > 0.250"
