"""Round-8 pieces of `clarus audit` (issue 8 round 8): the structural-count shortcut
(``gb_counts``) on synthetic views where a count is planted, with a control the word counts
cannot read and a null where nothing is planted; the Wilson interval every agent row carries;
and the "selected on dev, read on test" line that reports a shortcut free of the winner's
curse."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

from clarus_env.audit import (
    LEARNED_AGENTS,
    format_audit,
    selected_on_dev,
    verdict,
    view_leaves,
    wilson,
)
from clarus_env.audit_counts import anchor_day, struct_counts
from tests.test_audit_relations import _accuracy, _rule, _trainset


# -- the features -------------------------------------------------------------------------------
def test_struct_counts_count_items_per_value_and_on_the_anchor_day() -> None:
    records = {
        "claim": {"date_of_service": "2026-04-02", "lines": [{"code": "99213", "units": 1},
                                                            {"code": "20610", "units": 1}]},
        "eob": {"service_date": "2026-04-02", "paid": "80.00"},
        "log": {"transactions": [
            {"at": "2026-04-02T09:10:00Z", "type": "capture", "amount": "$25.00"},
            {"at": "2026-04-02T17:00:00Z", "type": "capture", "amount": "$25.00"},
            {"at": "2026-03-30T11:00:00Z", "type": "refund", "amount": "$5.00"},
            {"at": "2026-05-01T11:00:00Z", "type": "capture", "amount": "$25.00",
             "tags": ["portal", "late"]},
            {"type": "note",
             "text": "a free text much longer than forty characters, not a category"}]}}
    # the day printed by the most records (claim, EOB, log), not the log's most printed day
    assert anchor_day(records) == "2026-04-02"
    c = struct_counts(records)
    assert c["log.transactions[]#n"] == 5 and c["claim.lines[]#n"] == 2
    assert c["log.transactions[].type=capture"] == 3
    assert c["log.transactions[].type=capture@="] == 2
    assert c["log.transactions[].type=capture@>"] == 1
    assert c["log.transactions[].type=refund@<"] == 1
    assert c["log.transactions[]#n@="] == 2 and c["log.transactions[]#n@<"] == 1
    # nested lists count across their parents; a digit-only code is a category, an amount,
    # a date and a long free text are not
    assert c["log.transactions[].tags[]#n"] == 2 and c["log.transactions[].tags[]=portal"] == 1
    assert c["claim.lines[].code=99213"] == 1
    assert not any("$25" in k or "2026-" in k.split("=")[-1] or "free text" in k for k in c)
    # an undated item is counted but in no day bucket
    assert c["log.transactions[].type=note"] == 1 and "log.transactions[].type=note@=" not in c
    assert view_leaves({"records": records}).structs == {k: float(v) for k, v in c.items()}
    assert anchor_day({"a": {"x": "no date"}}) is None
    assert LEARNED_AGENTS["gb_counts"] == ("structcounts",)
    assert LEARNED_AGENTS["gb_counts_numbers"] == ("numbers", "structcounts")


def _captures(rng: random.Random, planted: bool = True) -> tuple[dict[str, Any],
                                                                 dict[str, Any]]:
    """Every processor log holds two copay captures among four filler events; the finding is
    whether both fall on the date of service (printed on the claim and the EOB) or one of them
    on another day of the same year. Totals, words, years and list lengths are the same in
    both branches: only the count of captures on the visit's day tells them apart. With
    ``planted`` False the days are drawn apart from the finding."""
    dup = rng.random() < 0.5
    both = dup if planted else rng.random() < 0.5
    dos = dt.date(2026, 3, 1) + dt.timedelta(days=rng.randrange(200))
    other = dos if both else dos + dt.timedelta(days=rng.choice((-1, 1)) * rng.randint(1, 50))
    events = [{"timestamp": f"{d.isoformat()}T{rng.randrange(8, 20):02d}:00:00Z",
               "description": "Copay at check-in", "type": "capture",
               "amount": f"{rng.randint(20, 40)}.00"} for d in (dos, other)]
    for _ in range(4):
        d = dos + dt.timedelta(days=rng.randint(-60, 60))
        events.append({"timestamp": f"{d.isoformat()}T12:00:00Z",
                       "description": rng.choice(("Card authorization", "Refund to card",
                                                  "Portal payment")), "type": "auth",
                       "amount": f"{rng.randint(5, 300)}.00"})
    rng.shuffle(events)
    view = {"complaint": "", "records": {
        "processor_log": {"transactions": events},
        "claim": {"date_of_service": dos.isoformat(), "billed": f"{rng.randint(50, 900)}.00"},
        "eob": {"service_date": dos.isoformat(), "paid": f"{rng.randint(10, 400)}.00"}}}
    return view, {"finding": "duplicate_charge" if dup else "other", "amount_cents": 0}


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_counts_find_the_second_capture_on_the_date_of_service() -> None:
    pytest.importorskip("sklearn")
    rng = random.Random(801)
    train = _trainset([_captures(rng) for _ in range(500)])
    fresh = [_captures(rng) for _ in range(300)]
    counted = _accuracy(_rule(train, "gb_counts"), fresh, "finding")
    assert counted >= 0.95
    # with the numeric leaves beside (noise amounts here) the count is still read
    assert _accuracy(_rule(train, "gb_counts_numbers"), fresh, "finding") >= 0.95
    # the control: word counts (whole record, and by year) see two captures everywhere
    words = _accuracy(_rule(train, "gb_wordcounts"), fresh, "finding")
    years = _accuracy(_rule(train, "gb_wordcounts_years"), fresh, "finding")
    assert words <= 0.65 and years <= 0.65 and max(words, years) <= counted


def test_counts_find_nothing_where_the_days_are_drawn_alike() -> None:
    pytest.importorskip("sklearn")
    rng = random.Random(802)
    train = _trainset([_captures(rng, planted=False) for _ in range(500)])
    fresh = [_captures(rng, planted=False) for _ in range(300)]
    assert _accuracy(_rule(train, "gb_counts"), fresh, "finding") <= 0.62


# -- the Wilson interval --------------------------------------------------------------------------
def test_wilson_interval_matches_the_closed_form() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    lo, hi = wilson(10, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == 1.0
    lo, hi = wilson(68, 200)  # a pass rate of 0.34 on 200 scenarios: about +-0.065
    assert (lo, hi) == (pytest.approx(0.2779, abs=1e-4), pytest.approx(0.4081, abs=1e-4))
    assert wilson(0, 0) == (0.0, 1.0)
    # narrower with more episodes, always around the rate
    assert wilson(340, 1000)[1] - wilson(340, 1000)[0] < hi - lo
    assert all(a <= k / 50 <= b for k in range(51) for a, b in [wilson(k, 50)])


# -- selected on dev, read on test ---------------------------------------------------------------
def _row(agent: str, kind: str, passed: float, finding: float, resolution: float
         ) -> dict[str, Any]:
    return {"agent": agent, "kind": kind, "pass_rate": passed, "outcome_accuracy": finding,
            "mean_score": passed, "mean_return": 0.0,
            "field_accuracy": {"finding": finding, "resolution_type": resolution}}


def _report(split: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"task": "deductive_liability", "split": split, "scenarios": 200,
            "train_scenarios": 1200, "fields": ["finding", "resolution_type"],
            "modal_share": {"finding": {"value": "a", "share": 0.24},
                            "resolution_type": {"value": "r", "share": 0.4}},
            "modal_outcome": {"value": {"finding": "a", "resolution_type": "r"}, "share": 0.2},
            "agents": [{**r, "pass_ci": list(wilson(round(r["pass_rate"] * 200), 200))}
                       for r in rows],
            "best_shortcut": {"pass_rate": max(r["pass_rate"] for r in rows),
                              "outcome_accuracy": max(r["outcome_accuracy"] for r in rows),
                              "field_accuracy": {"finding": 0.0, "resolution_type": 0.0}}}


def test_selection_on_dev_reports_the_dev_winner_on_test() -> None:
    dev = _report("dev", [_row("heuristic", "reference", 0.95, 0.97, 0.98),
                          _row("lucky", "shortcut", 0.30, 0.30, 0.45),
                          _row("steady", "shortcut", 0.26, 0.36, 0.47),
                          _row("pass_maximiser", "shortcut", 0.29, 0.90, 0.90),
                          _row("partial_x", "shortcut", 0.10, 0.20, 0.99),
                          _row("reward_farmer", "exploit", 0.50, 0.0, 0.0)])
    test = _report("test", [_row("heuristic", "reference", 0.96, 0.97, 0.98),
                            _row("lucky", "shortcut", 0.205, 0.25, 0.41),
                            _row("steady", "shortcut", 0.27, 0.35, 0.46),
                            _row("pass_maximiser", "shortcut", 0.28, 0.80, 0.80),
                            _row("partial_x", "shortcut", 0.10, 0.20, 0.99),
                            _row("reward_farmer", "exploit", 0.0, 0.0, 0.0)])
    sel = selected_on_dev(dev, test)
    # the best dev pass among the shortcuts (not the reference, not an exploit), read on test
    assert sel["pass"]["agent"] == "lucky" and sel["pass"]["dev"] == 0.30
    assert sel["pass"]["test"] == 0.205
    assert sel["pass"]["test_ci"] == [round(v, 4) for v in wilson(41, 200)]
    # per field: only agents held to that field compete (the pass maximiser to none, a
    # partial reasoner not on the filing it works out itself)
    assert sel["fields"]["finding"]["agent"] == "steady"
    assert sel["fields"]["finding"]["test"] == 0.35
    assert sel["fields"]["resolution_type"]["agent"] == "steady"
    # the best of the test split alone would have said pass 0.28 (pass_maximiser)
    assert max(r["pass_rate"] for r in test["agents"] if r["kind"] == "shortcut") == 0.28
    test["selected_on_dev"] = sel
    text = format_audit(test)
    assert ("selected on dev, read on test (95% Wilson): pass lucky 0.205 [0.155, 0.266]; "
            "finding steady 0.350") in text
    # the verdict is the report's last line and does not read the selection
    assert text.splitlines()[-1] == verdict(test)
    no_cands = selected_on_dev(_report("dev", [_row("heuristic", "reference", 1, 1, 1)]), test)
    assert no_cands["pass"] is None and no_cands["fields"]["finding"] is None


def test_audit_reports_gb_counts_intervals_and_the_dev_selection_on_a_small_split() -> None:
    pytest.importorskip("sklearn")
    from clarus_env.audit import audit_splits

    agents = ["gb_counts", "modal"]
    dev, test = audit_splits("deductive_liability", ["dev", "test"], limit=3, train_limit=120,
                             agents=agents)
    assert [r["agent"] for r in test["agents"]] == agents
    assert test["agents"][0]["kind"] == "shortcut"
    for r in dev["agents"] + test["agents"]:
        lo, hi = r["pass_ci"]
        assert 0.0 <= lo <= r["pass_rate"] <= hi <= 1.0
    assert "selected_on_dev" not in dev
    sel = test["selected_on_dev"]
    assert sel["pass"]["agent"] in agents
    assert set(sel["fields"]) == set(test["fields"])
    assert "selected on dev" in format_audit(test) and "selected on dev" not in format_audit(dev)


def test_count_cap_ranks_only_counts_seen_in_enough_views() -> None:
    from clarus_env.audit import LeafMatrix

    # per view a one-off id repeated on twenty items (variance 400 / 500 = 0.8 each, 500 of
    # them) and one EOB line more or less (variance 0.25): the cap of 400 columns must keep
    # the line count, as the one-off ids are never columns
    rng = random.Random(803)
    leaves = [view_leaves({"records": {
        "log": {"transactions": [{"last4": f"{i:04d}", "type": "sale"}] * 20},
        "eob": {"lines": [{"code": "A"}] * rng.choice((1, 2))}}}) for i in range(500)]
    columns = LeafMatrix(("structcounts",), leaves).columns
    assert "s:eob.lines[]#n" in columns and "s:eob.lines[].code=A" in columns
    assert not any("last4=" in c for c in columns)


@pytest.mark.parametrize(("kind", "prefix"), [("wordcounts", "k:"), ("yearcounts", "y:")])
def test_word_count_cap_ranks_only_words_seen_in_enough_views(kind: str, prefix: str) -> None:
    from clarus_env.audit import LeafMatrix

    # per view a one-off word repeated twenty times in a note (variance 400 / 500 = 0.8
    # each, 500 of them) and a word printed once or twice (variance 0.25): the cap of 400
    # columns must keep the common word's count, as the one-off words are never columns
    rng = random.Random(905)
    tags = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(9)) for _ in range(500)]
    leaves = [view_leaves({"records": {
        "note": {"on": "2026-03-02", "text": " ".join([tag] * 20)},
        "eob": {"on": "2026-03-02", "lines": [{"code": "denied"}] * rng.choice((1, 2))}}})
        for tag in tags]
    columns = LeafMatrix((kind,), leaves).columns
    assert any(c.startswith(prefix) and c.endswith("denied") for c in columns), columns[:5]
    assert not any(tag in c for c in columns for tag in tags[:50])
